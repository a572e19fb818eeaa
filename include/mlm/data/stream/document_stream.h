#pragma once
// The documents of one split, epoch after epoch: files in a seeded order per epoch, the
// held-out share routed by a stable content hash. Every data-parallel rank reads the same
// whole stream; the ranks split it later, sequence by sequence (see streaming_dataset.h).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlm/text/corpus/document_reader.h"

namespace mlm::data {

/// Where reading resumes within an epoch.
struct StreamCursor {
  int64_t file_index = 0;  // in the epoch's file order
  int64_t offset = 0;      // uncompressed byte offset in that file
  int64_t line = 1;
  int64_t doc_index = 0;   // split documents before this point in the epoch
};

enum class StreamEvent { document, end_of_epoch, end_of_stream };

struct StreamDocument {
  std::string text;
  int64_t epoch = 0;
  StreamCursor start;  // reading from here yields this document first
  StreamCursor end;    // reading from here yields the documents after it
  const text::CorpusFile* file = nullptr;  // read from (owned by the stream, lives as long)
};

/// Where a document begins, for errors: "path:line (byte N)".
std::string describe_position(const text::CorpusFile* file, const StreamCursor& at);

/// Which documents of the files belong to the split.
enum class Holdout { all, held_out_only, without_held_out };

struct StreamOptions {
  std::vector<text::CorpusFile> files;
  text::ReadOptions read;
  Holdout holdout = Holdout::all;
  double held_out_fraction = 0;
  bool shuffle_files = false;
  uint64_t seed = 0;
  bool repeat = false;  // train: epochs forever; valid: one epoch, then end_of_stream
};

/// True when the document belongs to the held-out share (stable: depends on the text only).
bool is_held_out(const std::string& text, double fraction);

class DocumentStream {
 public:
  DocumentStream(StreamOptions options, int64_t epoch, StreamCursor cursor);

  StreamEvent next(StreamDocument& doc);
  /// Bad records and UTF-8 repairs of every file read so far.
  text::ReaderCounters counters() const;
  /// Bytes of the current file consumed (compressed bytes for gzip; 0 between files).
  int64_t input_offset() const { return reader_ ? reader_->input_offset() : 0; }

 private:
  void start_epoch();

  StreamOptions options_;
  int64_t epoch_;
  StreamCursor cursor_;
  std::vector<int64_t> order_;
  std::unique_ptr<text::DocumentReader> reader_;
  text::ReaderCounters finished_;  // counters of closed readers
  bool ended_ = false;
  text::Document doc_;
};

}  // namespace mlm::data

#pragma once
// The parallel driver of `mlm-data prepare`: a reader thread cuts one split's documents into
// numbered batches, `workers` threads tokenize them sentence by sentence, and next() hands
// them back in batch order, so what the caller writes never depends on the thread count or
// on timing (util/ordered_workers.h). Documents and sentences are cut exactly as the
// streaming path cuts them with data.packing: sentences (DocumentStream, then
// encode_sentences of stream/tokenizing_pipeline.h).
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "mlm/data/stream/document_stream.h"
#include "mlm/data/stream/tokenizing_pipeline.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/ordered_workers.h"

namespace mlm::data::store_detail {

/// Where reading stands in a split's files: for progress, in bytes of the files themselves.
struct InputPosition {
  int64_t file_index = 0;
  int64_t offset = 0;  // bytes of that file consumed (compressed bytes for gzip)
};

struct DocumentBatch {
  std::vector<TokenizedDocument> docs;  // ids, sentence_ends, start and end cursors
  int64_t text_bytes = 0;               // UTF-8 bytes of the documents' text
  InputPosition input;                  // after the batch's last document
  text::ReaderCounters counters;        // bad records and repairs since the start, cumulative
};

class OrderedTokenizer {
 public:
  /// Reads `stream`'s documents (one pass, no shuffle) from `from` on.
  OrderedTokenizer(StreamOptions stream, StreamCursor from, const text::Tokenizer& tokenizer, int workers);
  OrderedTokenizer(const OrderedTokenizer&) = delete;
  OrderedTokenizer& operator=(const OrderedTokenizer&) = delete;

  /// The next batch in order; false after the last. A reading or tokenizing error is
  /// rethrown here, after every batch before it.
  bool next(DocumentBatch& out);

 private:
  struct Batch {
    std::vector<std::string> texts;
    std::vector<const text::CorpusFile*> files;  // of each text, for errors
    DocumentBatch out;
    size_t bytes = 0;
    bool last = false;
    std::exception_ptr error;
  };

  Batch read_batch();
  void tokenize(Batch& batch) const;

  DocumentStream stream_;
  int64_t num_files_;
  const text::Tokenizer& tokenizer_;
  bool finished_ = false;
  OrderedWorkers<Batch> batches_;  // last: its threads use the members above
};

}  // namespace mlm::data::store_detail

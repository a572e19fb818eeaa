#pragma once
// What a reader of one file format implements behind DocumentReader, and what every format
// does alike to a document: the NUL check, the UTF-8 repair, bad records skipped or fatal.
#include <memory>
#include <string>

#include "mlm/text/corpus/document_reader.h"

namespace mlm::text {

class DocumentSource {
 public:
  DocumentSource(const CorpusFile& file, const ReadOptions& options)
      : file_(file), options_(options) {}
  virtual ~DocumentSource() = default;

  virtual bool next(Document& doc) = 0;
  virtual int64_t input_offset() const = 0;
  const ReaderCounters& counters() const { return counters_; }

 protected:
  /// Replaces invalid UTF-8 in `text` (read at `line`), counting and warning once.
  void repair(std::string& text, int64_t line);
  /// The NUL check and the repair of a document; false when it is dropped as a bad record.
  bool finish(Document& doc);
  /// Counts a bad record (warning once), or throws DataError under on_bad_record: error.
  void bad_record(int64_t line, const std::string& why);

  CorpusFile file_;
  ReadOptions options_;
  ReaderCounters counters_;
};

/// Text and JSON Lines (plain, gzip or zstd) from an uncompressed byte offset.
std::unique_ptr<DocumentSource> open_line_documents(const CorpusFile& file,
                                                    const ReadOptions& options, int64_t offset,
                                                    int64_t line);
/// The text column of a CSV/TSV, Parquet or Arrow IPC file from a row.
std::unique_ptr<DocumentSource> open_table_documents(const CorpusFile& file,
                                                     const ReadOptions& options, int64_t row);

}  // namespace mlm::text

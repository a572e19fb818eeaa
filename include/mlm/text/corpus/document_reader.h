#pragma once
// Streams the documents of one corpus file, one at a time, from any position a previous
// reader reported: lines of text or JSON Lines (plain, gzip or zstd), or the text column of a
// table (CSV/TSV, Parquet, Arrow IPC). Memory never depends on the size of the file.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/text/corpus/corpus_files.h"

namespace mlm::text {

/// A text document longer than this (one huge line or block) is cut, at whitespace, into
/// several documents of at most this size; the reader buffers at most about twice this.
inline constexpr size_t kMaxTextDocumentBytes = size_t{1} << 20;
/// A JSON Lines record or a table cell longer than this is a bad record (its text is not
/// split).
inline constexpr size_t kMaxJsonlRecordBytes = size_t{64} << 20;

struct Document {
  std::string text;        // valid UTF-8 (repaired), never empty
  int64_t offset = 0;      // where reading this document starts: an uncompressed byte
                           // offset, or for a table the 0-based row
  int64_t line = 1;        // 1-based line of that offset (for a table, offset + 1)
  int64_t end_offset = 0;  // offset where reading the next document starts
  int64_t end_line = 1;
};

struct ReaderCounters {
  int64_t bad_records = 0;         // skipped: not JSON, no text field, NUL bytes
  int64_t invalid_utf8_fixes = 0;  // invalid sequences replaced by U+FFFD
};

class DocumentSource;

/// The documents of one corpus file in any format, in file order.
class DocumentReader {
 public:
  /// Opens `file` and positions it at `offset` (which must come from Document::offset or
  /// end_offset of the same file): an uncompressed byte offset for the line formats (a
  /// compressed file is decompressed from its start up to there), a row for tables (a
  /// Parquet file starts at that row's row group).
  DocumentReader(const CorpusFile& file, const ReadOptions& options, int64_t offset = 0,
                 int64_t line = 1);
  ~DocumentReader();
  DocumentReader(const DocumentReader&) = delete;
  DocumentReader& operator=(const DocumentReader&) = delete;

  /// The next non-empty document; false at the end of the file. Bad records are skipped and
  /// counted, or throw DataError "file:line: ..." under on_bad_record: error.
  bool next(Document& doc);

  const ReaderCounters& counters() const;
  /// Bytes of the file itself consumed so far (compressed bytes; for a table, its share
  /// of the file by rows): for progress.
  int64_t input_offset() const;

 private:
  std::unique_ptr<DocumentSource> source_;
};

}  // namespace mlm::text

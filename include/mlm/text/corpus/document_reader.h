#pragma once
// Streams the documents of one corpus file (plain or gzip, read through zlib), one at a
// time, from any byte offset a previous reader reported: memory never depends on the file.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/text/corpus/corpus_files.h"

namespace mlm::text {

/// A text document longer than this (one huge line or block) is cut, at whitespace, into
/// several documents of at most this size; the reader buffers at most about twice this.
inline constexpr size_t kMaxTextDocumentBytes = size_t{1} << 20;
/// A JSON Lines record longer than this is a bad record (its text is not split).
inline constexpr size_t kMaxJsonlRecordBytes = size_t{64} << 20;

struct Document {
  std::string text;        // valid UTF-8 (repaired), never empty
  int64_t offset = 0;      // uncompressed byte offset where reading this document starts
  int64_t line = 1;        // 1-based line of that offset
  int64_t end_offset = 0;  // offset where reading the next document starts
  int64_t end_line = 1;
};

struct ReaderCounters {
  int64_t bad_records = 0;         // skipped: not JSON, no text field, NUL bytes
  int64_t invalid_utf8_fixes = 0;  // invalid sequences replaced by U+FFFD
};

class DocumentReader {
 public:
  /// Opens `file` and positions it at `offset` (which must come from Document::offset or
  /// end_offset of the same file). For gzip files the seek decompresses from the start.
  DocumentReader(const CorpusFile& file, const ReadOptions& options, int64_t offset = 0,
                 int64_t line = 1);
  ~DocumentReader();
  DocumentReader(const DocumentReader&) = delete;
  DocumentReader& operator=(const DocumentReader&) = delete;

  /// The next non-empty document; false at the end of the file. Bad records are skipped and
  /// counted, or throw DataError "file:line: ..." under on_bad_record: error.
  bool next(Document& doc);

  const ReaderCounters& counters() const { return counters_; }
  /// Bytes of the file itself consumed so far (compressed bytes for gzip): for progress.
  int64_t input_offset() const { return static_cast<int64_t>(gzoffset(gz_)); }

 private:
  // The next line's bytes stay in buf_[begin_, begin_ + length); see scan_line().
  size_t scan_line(size_t limit, bool& has_newline);
  void fill(size_t want);
  void consume(size_t n) { begin_ += n; }
  int64_t offset() const { return buf_offset_ + static_cast<int64_t>(begin_); }
  std::string_view line_view(size_t n) const;

  bool next_text_line(Document& doc);
  bool next_text_block(Document& doc);
  bool next_jsonl(Document& doc);
  // NUL check and UTF-8 repair; false when the document is dropped as a bad record.
  bool finish(Document& doc);
  void bad_record(int64_t line, const std::string& why);

  CorpusFile file_;
  ReadOptions options_;
  gzFile gz_ = nullptr;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  int64_t buf_offset_ = 0;  // file offset of buf_[0]
  int64_t line_ = 1;        // line number at offset()
  bool eof_ = false;
  ReaderCounters counters_;
};

}  // namespace mlm::text

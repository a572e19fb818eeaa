// Text (a document per line or per blank-line-separated block) and JSON Lines, read line by
// line from the decompressed bytes, in a buffer about twice the longest document.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "byte_stream.h"
#include "document_source.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"

namespace mlm::text {
namespace {

constexpr size_t kReadChunk = 256 * 1024;

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; });
}

std::string_view strip_cr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

class LineDocuments final : public DocumentSource {
 public:
  LineDocuments(const CorpusFile& file, const ReadOptions& options, int64_t offset, int64_t line)
      : DocumentSource(file, options), stream_(open_byte_stream(file, offset)),
        buf_(2 * kReadChunk), buf_offset_(offset), line_(line) {}

  bool next(Document& doc) override {
    if (file_.format == FileFormat::jsonl) return next_jsonl(doc);
    return options_.doc_separator == config::DocSeparator::line ? next_text_line(doc)
                                                                : next_text_block(doc);
  }
  int64_t input_offset() const override { return stream_->input_offset(); }

 private:
  // The next line's bytes stay in buf_[begin_, begin_ + length); see scan_line().
  size_t scan_line(size_t limit, bool& has_newline);
  void fill(size_t want);
  void consume(size_t n) { begin_ += n; }
  int64_t offset() const { return buf_offset_ + static_cast<int64_t>(begin_); }
  std::string_view line_view(size_t n) const {
    return std::string_view(buf_.data() + begin_, n);
  }

  bool next_text_line(Document& doc);
  bool next_text_block(Document& doc);
  bool next_jsonl(Document& doc);

  std::unique_ptr<ByteStream> stream_;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;
  int64_t buf_offset_ = 0;  // file offset of buf_[0]
  int64_t line_ = 1;        // line number at offset()
  bool eof_ = false;
};

}  // namespace

void LineDocuments::fill(size_t want) {
  if (begin_ > 0) {  // compact: keep the unread bytes at the front
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    buf_offset_ += static_cast<int64_t>(begin_);
    begin_ = 0;
  }
  if (buf_.size() < want + kReadChunk) buf_.resize(want + kReadChunk);
  while (!eof_ && end_ < want) {
    const size_t n = stream_->read(buf_.data() + end_, buf_.size() - end_);
    if (n == 0) eof_ = true;
    end_ += n;
  }
}

size_t LineDocuments::scan_line(size_t limit, bool& has_newline) {
  size_t searched = 0;
  has_newline = false;
  for (;;) {
    const size_t avail = end_ - begin_;
    const size_t window = std::min(avail, limit + 1);
    if (window > searched) {
      const void* p = std::memchr(buf_.data() + begin_ + searched, '\n', window - searched);
      if (p != nullptr) {
        has_newline = true;
        return static_cast<size_t>(static_cast<const char*>(p) - (buf_.data() + begin_));
      }
      searched = window;
    }
    if (avail > limit) return limit + 1;  // longer than limit: the caller cuts or skips it
    if (eof_) return avail;               // the last line, without a newline (0 at the end)
    fill(std::min(limit + 1, avail + kReadChunk));
  }
}

bool LineDocuments::next_text_line(Document& doc) {
  for (;;) {
    const int64_t start = offset(), start_line = line_;
    bool newline = false;
    const size_t n = scan_line(kMaxTextDocumentBytes, newline);
    if (n == 0 && !newline) return false;
    if (n > kMaxTextDocumentBytes) {
      // A huge line: emit it in pieces; the rest of the line is read from the cut next time.
      const size_t cut = cut_point(line_view(n), kMaxTextDocumentBytes);
      doc.text.assign(line_view(cut));
      consume(cut);
    } else {
      const std::string_view line = strip_cr(line_view(n));
      if (is_blank(line)) {
        consume(n + newline);
        line_ += newline;
        continue;
      }
      doc.text.assign(line);
      consume(n + newline);
      line_ += newline;
    }
    if (is_blank(doc.text)) continue;
    doc.offset = start;
    doc.line = start_line;
    doc.end_offset = offset();
    doc.end_line = line_;
    if (finish(doc)) return true;
  }
}

bool LineDocuments::next_text_block(Document& doc) {
  for (;;) {
    doc.text.clear();
    for (;;) {
      const int64_t start = offset(), start_line = line_;
      bool newline = false;
      const size_t n = scan_line(kMaxTextDocumentBytes, newline);
      if (n == 0 && !newline) break;  // end of file
      if (n > kMaxTextDocumentBytes) {
        if (!doc.text.empty()) break;  // the huge line starts its own documents
        const size_t cut = cut_point(line_view(n), kMaxTextDocumentBytes);
        doc.text.assign(line_view(cut));
        consume(cut);
        doc.offset = start;
        doc.line = start_line;
        if (is_blank(doc.text)) {
          doc.text.clear();
          continue;
        }
        break;
      }
      const std::string_view line = strip_cr(line_view(n));
      if (is_blank(line)) {
        consume(n + newline);
        line_ += newline;
        if (!doc.text.empty()) break;
        continue;
      }
      // Not consumed when it would overflow the document: it starts the next one.
      if (!doc.text.empty() && doc.text.size() + 1 + line.size() > kMaxTextDocumentBytes) break;
      if (doc.text.empty()) {
        doc.offset = start;
        doc.line = start_line;
      } else {
        doc.text += '\n';
      }
      doc.text.append(line);
      consume(n + newline);
      line_ += newline;
    }
    if (doc.text.empty()) return false;
    doc.end_offset = offset();
    doc.end_line = line_;
    if (finish(doc)) return true;
  }
}

bool LineDocuments::next_jsonl(Document& doc) {
  std::string record;
  for (;;) {
    const int64_t start = offset(), start_line = line_;
    bool newline = false;
    size_t n = scan_line(kMaxJsonlRecordBytes, newline);
    if (n == 0 && !newline) return false;
    if (n > kMaxJsonlRecordBytes) {
      // Skip the rest of the oversized record without buffering it.
      while (!newline) {
        consume(n);
        n = scan_line(kReadChunk, newline);
        if (n == 0 && !newline) break;
        if (n > kReadChunk) n = kReadChunk;
      }
      consume(n + newline);
      line_ += newline;
      bad_record(start_line, "JSON Lines record longer than " +
                                 std::to_string(kMaxJsonlRecordBytes >> 20) + " MiB");
      continue;
    }
    const std::string_view line = strip_cr(line_view(n));
    if (is_blank(line)) {
      consume(n + newline);
      line_ += newline;
      continue;
    }
    record.assign(line);
    consume(n + newline);
    line_ += newline;
    repair(record, start_line);
    const auto json = nlohmann::json::parse(record, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
      bad_record(start_line, "not valid JSON");
      continue;
    }
    const auto field = json.is_object() ? json.find(options_.text_field) : json.end();
    if (!json.is_object() || field == json.end() || !field->is_string()) {
      bad_record(start_line, "no string field \"" + options_.text_field + "\" (data.text_field)");
      continue;
    }
    doc.text = field->get<std::string>();
    if (is_blank(doc.text) || doc.text.find_first_not_of(" \t\r\n\f\v") == std::string::npos) continue;
    doc.offset = start;
    doc.line = start_line;
    doc.end_offset = offset();
    doc.end_line = line_;
    if (finish(doc)) return true;
  }
}

std::unique_ptr<DocumentSource> open_line_documents(const CorpusFile& file,
                                                    const ReadOptions& options, int64_t offset,
                                                    int64_t line) {
  return std::make_unique<LineDocuments>(file, options, offset, line);
}

}  // namespace mlm::text

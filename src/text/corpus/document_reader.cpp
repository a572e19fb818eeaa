#include "mlm/text/corpus/document_reader.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text {
namespace {

constexpr size_t kReadChunk = 256 * 1024;

std::atomic<bool> g_logged_utf8{false};
std::atomic<bool> g_logged_bad_record{false};

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; });
}

std::string_view strip_cr(std::string_view s) {
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

}  // namespace

DocumentReader::DocumentReader(const CorpusFile& file, const ReadOptions& options, int64_t offset,
                               int64_t line)
    : file_(file), options_(options), buf_offset_(offset), line_(line) {
  gz_ = gzopen(file_.path.c_str(), "rb");
  if (gz_ == nullptr) throw DataError("cannot open '" + file_.path + "': " + std::strerror(errno));
  gzbuffer(gz_, kReadChunk);
  if (offset > 0 && gzseek(gz_, offset, SEEK_SET) != offset) {
    gzclose(gz_);
    gz_ = nullptr;
    throw DataError("'" + file_.path + "': cannot seek to byte " + std::to_string(offset) +
                    " (did the file change since the position was saved?)");
  }
  buf_.resize(2 * kReadChunk);
}

DocumentReader::~DocumentReader() {
  if (gz_ != nullptr) gzclose(gz_);
}

void DocumentReader::fill(size_t want) {
  if (begin_ > 0) {  // compact: keep the unread bytes at the front
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    buf_offset_ += static_cast<int64_t>(begin_);
    begin_ = 0;
  }
  if (buf_.size() < want + kReadChunk) buf_.resize(want + kReadChunk);
  while (!eof_ && end_ < want) {
    const size_t room = std::min(buf_.size() - end_, size_t{1} << 30);
    const int n = gzread(gz_, buf_.data() + end_, static_cast<unsigned>(room));
    if (n < 0) {
      int code = 0;
      throw DataError("'" + file_.path + "': read error near byte " +
                      std::to_string(buf_offset_ + static_cast<int64_t>(end_)) + ": " +
                      gzerror(gz_, &code));
    }
    if (n == 0) eof_ = true;
    end_ += static_cast<size_t>(n);
  }
}

size_t DocumentReader::scan_line(size_t limit, bool& has_newline) {
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

std::string_view DocumentReader::line_view(size_t n) const {
  return std::string_view(buf_.data() + begin_, n);
}

void DocumentReader::bad_record(int64_t line, const std::string& why) {
  if (options_.on_bad_record == config::BadRecordPolicy::error) {
    throw DataError(file_.path + ":" + std::to_string(line) + ": " + why +
                    " (set data.on_bad_record: skip to skip such records)");
  }
  ++counters_.bad_records;
  if (!g_logged_bad_record.exchange(true)) {
    log::warn("data", "{}:{}: {}; skipped (further bad records are only counted)", file_.path,
              line, why);
  }
}

bool DocumentReader::finish(Document& doc) {
  if (std::memchr(doc.text.data(), 0, doc.text.size()) != nullptr) {
    bad_record(doc.line, "NUL byte in the text (binary data)");
    return false;
  }
  if (const size_t fixes = repair_utf8(doc.text); fixes > 0) {
    counters_.invalid_utf8_fixes += static_cast<int64_t>(fixes);
    if (!g_logged_utf8.exchange(true)) {
      log::warn("data", "{}:{}: invalid UTF-8 replaced by U+FFFD (further repairs are only counted)",
                file_.path, doc.line);
    }
  }
  return true;
}

bool DocumentReader::next(Document& doc) {
  switch (file_.format) {
    case FileFormat::jsonl:
      return next_jsonl(doc);
    case FileFormat::text:
      return options_.doc_separator == config::DocSeparator::line ? next_text_line(doc)
                                                                  : next_text_block(doc);
  }
  return false;
}

bool DocumentReader::next_text_line(Document& doc) {
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

bool DocumentReader::next_text_block(Document& doc) {
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

bool DocumentReader::next_jsonl(Document& doc) {
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
    if (const size_t fixes = repair_utf8(record); fixes > 0) {
      counters_.invalid_utf8_fixes += static_cast<int64_t>(fixes);
      if (!g_logged_utf8.exchange(true)) {
        log::warn("data", "{}:{}: invalid UTF-8 replaced by U+FFFD (further repairs are only counted)",
                  file_.path, start_line);
      }
    }
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

}  // namespace mlm::text

#include "document_source.h"

#include <atomic>
#include <cstring>

#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text {
namespace {

std::atomic<bool> g_logged_utf8{false};
std::atomic<bool> g_logged_bad_record{false};

}  // namespace

void DocumentSource::repair(std::string& text, int64_t line) {
  if (const size_t fixes = repair_utf8(text); fixes > 0) {
    counters_.invalid_utf8_fixes += static_cast<int64_t>(fixes);
    if (!g_logged_utf8.exchange(true)) {
      log::warn("data", "{}: invalid UTF-8 replaced by U+FFFD (further repairs are only counted)",
                describe_place(file_, line));
    }
  }
}

bool DocumentSource::finish(Document& doc) {
  if (std::memchr(doc.text.data(), 0, doc.text.size()) != nullptr) {
    bad_record(doc.line, "NUL byte in the text (binary data)");
    return false;
  }
  repair(doc.text, doc.line);
  return true;
}

void DocumentSource::bad_record(int64_t line, const std::string& why) {
  if (options_.on_bad_record == config::BadRecordPolicy::error) {
    throw DataError(describe_place(file_, line) + ": " + why +
                    " (set data.on_bad_record: skip to skip such records)");
  }
  ++counters_.bad_records;
  if (!g_logged_bad_record.exchange(true)) {
    log::warn("data", "{}: {}; skipped (further bad records are only counted)",
              describe_place(file_, line), why);
  }
}

DocumentReader::DocumentReader(const CorpusFile& file, const ReadOptions& options, int64_t offset,
                               int64_t line)
    : source_(is_table(file.format) ? open_table_documents(file, options, offset)
                                    : open_line_documents(file, options, offset, line)) {}

DocumentReader::~DocumentReader() = default;

bool DocumentReader::next(Document& doc) { return source_->next(doc); }

const ReaderCounters& DocumentReader::counters() const { return source_->counters(); }

int64_t DocumentReader::input_offset() const { return source_->input_offset(); }

}  // namespace mlm::text

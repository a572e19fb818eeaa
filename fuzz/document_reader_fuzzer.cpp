// libFuzzer target: the corpus reader (mlm/text/corpus/document_reader.h) on arbitrary file contents.
// Only mlm exceptions (DataError for unreadable input under on_bad_record: error or a corrupt
// gzip stream) may escape. Every document must be non-empty, valid UTF-8 without NUL bytes,
// with increasing offsets, and a reader restarted at any document's end position (what a
// checkpoint stores) must yield exactly the documents that followed.
//
// Input: byte 0 holds flags (bit 0: JSON Lines, bit 1: one document per line, bit 2:
// on_bad_record error, bit 3: write the rest gzip-compressed); the rest is the file.
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mlm/text/corpus/document_reader.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "document_reader_fuzzer: %s\n", what.c_str());
  std::abort();
}

const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/mlm_document_reader_fuzz_" +
           std::to_string(getpid());
  }();
  return path;
}

void write_file(const std::string& path, const std::string& bytes, bool gzip) {
  if (gzip) {
    gzFile out = gzopen(path.c_str(), "wb");
    if (out == nullptr) fail("cannot write " + path);
    if (!bytes.empty()) gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(out);
    return;
  }
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) fail("cannot write " + path);
  std::fwrite(bytes.data(), 1, bytes.size(), out);
  std::fclose(out);
}

// Reads every document starting at (offset, line).
std::vector<mlm::text::Document> read_all(const mlm::text::CorpusFile& file,
                                          const mlm::text::ReadOptions& options,
                                          int64_t offset, int64_t line) {
  std::vector<mlm::text::Document> docs;
  mlm::text::DocumentReader reader(file, options, offset, line);
  mlm::text::Document doc;
  while (reader.next(doc)) {
    docs.push_back(doc);
    if (docs.size() > 100000) fail("more documents than bytes");
  }
  return docs;
}

void check_documents(const std::vector<mlm::text::Document>& docs) {
  int64_t previous_end = 0;
  for (const auto& doc : docs) {
    if (doc.text.empty()) fail("empty document");
    if (std::memchr(doc.text.data(), 0, doc.text.size()) != nullptr) fail("NUL in a document");
    std::string copy = doc.text;
    if (mlm::text::repair_utf8(copy) != 0) fail("invalid UTF-8 in a document");
    if (doc.offset < previous_end || doc.end_offset <= doc.offset) {
      fail("offsets out of order: " + std::to_string(doc.offset) + ".." +
           std::to_string(doc.end_offset) + " after " + std::to_string(previous_end));
    }
    if (doc.line < 1 || doc.end_line < doc.line) fail("line numbers out of order");
    previous_end = doc.end_offset;
  }
}

bool same(const mlm::text::Document& a, const mlm::text::Document& b) {
  return a.text == b.text && a.offset == b.offset && a.line == b.line &&
         a.end_offset == b.end_offset && a.end_line == b.end_line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const unsigned flags = data[0];
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  mlm::text::CorpusFile file;
  file.path = scratch_path();
  file.format = (flags & 1) ? mlm::text::FileFormat::jsonl : mlm::text::FileFormat::text;
  mlm::text::ReadOptions options;
  options.doc_separator = (flags & 2) ? mlm::config::DocSeparator::line
                                      : mlm::config::DocSeparator::blank_line;
  options.on_bad_record = (flags & 4) ? mlm::config::BadRecordPolicy::error
                                      : mlm::config::BadRecordPolicy::skip;
  write_file(file.path, bytes, (flags & 8) != 0);

  try {
    const auto docs = read_all(file, options, 0, 1);
    check_documents(docs);
    // Resume from up to 8 documents' end positions (spread over the file): the rest must be
    // identical.
    const size_t stride = docs.size() / 8 + 1;
    for (size_t i = 0; i < docs.size(); i += stride) {
      const auto rest = read_all(file, options, docs[i].end_offset, docs[i].end_line);
      if (rest.size() != docs.size() - i - 1) {
        fail("resuming after document " + std::to_string(i) + " gives " +
             std::to_string(rest.size()) + " documents, expected " +
             std::to_string(docs.size() - i - 1));
      }
      for (size_t k = 0; k < rest.size(); ++k) {
        if (!same(rest[k], docs[i + 1 + k])) {
          fail("resuming after document " + std::to_string(i) + ": document " +
               std::to_string(i + 1 + k) + " differs");
        }
      }
    }
  } catch (const mlm::DataError&) {
  } catch (const mlm::ConfigError&) {
  } catch (const mlm::UsageError&) {
  }
  std::remove(file.path.c_str());
  return 0;
}

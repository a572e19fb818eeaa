#include "mlm/text/corpus/corpus_files.h"

#include <glob.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "mlm/util/errors.h"
#include "mlm/util/fnv1a.h"
#include "mlm/util/logging.h"

namespace mlm::text {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Opens the file through zlib and looks for a NUL byte in its first 64 KiB (grep's test for
// binary data). Throws DataError when it cannot be read.
bool looks_binary(const std::string& path, const std::string& key) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    throw DataError(key + ": cannot read '" + path + "': " + std::strerror(errno));
  }
  std::vector<char> head(64 * 1024);
  const int n = gzread(gz, head.data(), static_cast<unsigned>(head.size()));
  if (n < 0) {
    int code = 0;
    std::string message = gzerror(gz, &code);
    gzclose(gz);
    throw DataError(key + ": cannot read '" + path + "': " + message);
  }
  gzclose(gz);
  return std::memchr(head.data(), 0, static_cast<size_t>(n)) != nullptr;
}

}  // namespace

ReadOptions ReadOptions::from(const config::DataConfig& data) {
  ReadOptions options;
  options.format = data.format;
  options.doc_separator = data.doc_separator;
  options.text_field = data.text_field;
  options.on_bad_record = data.on_bad_record;
  return options;
}

FileFormat detect_format(const std::string& path, config::DataFormat configured) {
  if (configured == config::DataFormat::text) return FileFormat::text;
  if (configured == config::DataFormat::jsonl) return FileFormat::jsonl;
  std::string name = path;
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  for (const char* ext : {".jsonl", ".json", ".ndjson"}) {
    if (ends_with(name, ext)) return FileFormat::jsonl;
  }
  return FileFormat::text;
}

std::vector<CorpusFile> resolve_corpus(const std::vector<std::string>& patterns,
                                       const ReadOptions& options, const std::string& key) {
  if (patterns.empty()) throw ConfigError(key + " is empty: give at least one file or glob", key);
  std::vector<std::string> paths;
  for (const auto& pattern : patterns) {
    if (!has_glob_chars(pattern)) {
      struct stat st {};
      if (::stat(pattern.c_str(), &st) != 0) {
        throw DataError(key + ": '" + pattern + "': " + std::strerror(errno));
      }
      if (S_ISDIR(st.st_mode)) {
        throw DataError(key + ": '" + pattern + "' is a directory (give files or a glob such as '" +
                        pattern + "/*.txt')");
      }
      paths.push_back(pattern);
      continue;
    }
    glob_t matches{};
    const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &matches);
    size_t found = 0;
    if (rc == 0) {
      for (size_t i = 0; i < matches.gl_pathc; ++i) {
        std::string path = matches.gl_pathv[i];
        if (!is_regular_file(path)) continue;  // directories a wildcard happens to match
        paths.push_back(std::move(path));
        ++found;
      }
    }
    globfree(&matches);
    if (rc == GLOB_ABORTED) throw DataError(key + ": cannot read a directory of '" + pattern + "'");
    if (found == 0) throw DataError(key + ": '" + pattern + "' matches no file");
  }

  std::vector<CorpusFile> files;
  for (auto& path : paths) {
    if (looks_binary(path, key)) {
      if (options.on_bad_record == config::BadRecordPolicy::error) {
        throw DataError(key + ": '" + path + "' is a binary file (NUL bytes in its first 64 KiB)");
      }
      log::warn("data", "skipping binary file '{}' (NUL bytes in its first 64 KiB)", path);
      continue;
    }
    files.push_back({path, detect_format(path, options.format)});
  }
  if (files.empty()) throw DataError(key + ": no readable text file among the given paths");
  return files;
}

uint64_t corpus_fingerprint(const std::vector<CorpusFile>& files) {
  Fnv1a hash;
  for (const auto& f : files) hash.mix(f.path).mix("\n");
  return hash.value();
}

}  // namespace mlm::text

#include "mlm/text/corpus/corpus_files.h"

#include <glob.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "byte_stream.h"
#include "file_signature.h"
#include "table_batches.h"
#include "mlm/util/errors.h"
#include "mlm/util/fnv1a.h"
#include "mlm/util/logging.h"

namespace mlm::text {
namespace {

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The name without a compression suffix, for the format's extension.
std::string without_compression(const std::string& path) {
  for (const char* ext : {".gz", ".zst", ".zstd"}) {
    if (path.ends_with(ext)) return path.substr(0, path.size() - std::strlen(ext));
  }
  return path;
}

// A NUL byte in the first 64 KiB of text (grep's test for binary data). Throws DataError
// when the file cannot be read or decompressed.
bool looks_binary(const CorpusFile& file, const std::string& key) {
  std::vector<char> head(64 * 1024);
  size_t n = 0;
  try {
    auto stream = open_byte_stream(file);
    for (size_t got = 1; got > 0 && n < head.size(); n += got) got = stream->read(head.data() + n, head.size() - n);
  } catch (const DataError& e) {
    throw DataError(key + ": " + e.what());
  }
  return std::memchr(head.data(), 0, n) != nullptr;
}

// The data files of a directory `datasets`' save_to_disk wrote, in their order (state.json's
// "_data_files"); empty when `dir` is not such a directory.
std::vector<std::string> saved_dataset_files(const std::string& dir, const std::string& key) {
  const auto state = std::filesystem::path(dir) / "state.json";
  if (!std::filesystem::exists(state)) return {};
  std::ifstream in(state);
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  const auto files = json.is_object() ? json.find("_data_files") : json.end();
  if (json.is_discarded() || files == json.end() || !files->is_array() || files->empty()) {
    throw DataError(key + ": '" + state.string() + "' lists no \"_data_files\" (not a dataset " +
                    "saved by datasets' save_to_disk?)");
  }
  std::vector<std::string> paths;
  for (const auto& f : *files) {
    const auto name = f.is_object() ? f.find("filename") : f.end();
    if (name == f.end() || !name->is_string() ||
        name->get<std::string>().find('/') != std::string::npos) {
      throw DataError(key + ": '" + state.string() + "': a \"_data_files\" entry without a " +
                      "plain \"filename\"");
    }
    paths.push_back((std::filesystem::path(dir) / name->get<std::string>()).string());
  }
  return paths;
}

}  // namespace

bool is_table(FileFormat format) {
  return format == FileFormat::csv || format == FileFormat::tsv || format == FileFormat::parquet ||
         format == FileFormat::arrow;
}

const char* format_name(FileFormat format) {
  switch (format) {
    case FileFormat::text: return "text";
    case FileFormat::jsonl: return "JSON Lines";
    case FileFormat::csv: return "CSV";
    case FileFormat::tsv: return "TSV";
    case FileFormat::parquet: return "Parquet";
    case FileFormat::arrow: return "Arrow IPC";
  }
  return "?";
}

ReadOptions ReadOptions::from(const config::DataConfig& data) {
  ReadOptions options;
  options.format = data.format;
  options.doc_separator = data.doc_separator;
  options.text_field = data.text_field;
  options.on_bad_record = data.on_bad_record;
  return options;
}

FileFormat detect_format(const std::string& path, config::DataFormat configured) {
  switch (configured) {
    case config::DataFormat::text: return FileFormat::text;
    case config::DataFormat::jsonl: return FileFormat::jsonl;
    case config::DataFormat::csv: return FileFormat::csv;
    case config::DataFormat::tsv: return FileFormat::tsv;
    case config::DataFormat::parquet: return FileFormat::parquet;
    case config::DataFormat::arrow: return FileFormat::arrow;
    case config::DataFormat::auto_detect: break;
  }
  const std::string name = without_compression(path);
  for (const char* ext : {".jsonl", ".json", ".ndjson"}) {
    if (name.ends_with(ext)) return FileFormat::jsonl;
  }
  if (name.ends_with(".csv")) return FileFormat::csv;
  if (name.ends_with(".tsv")) return FileFormat::tsv;
  if (name.ends_with(".parquet")) return FileFormat::parquet;
  if (name.ends_with(".arrow")) return FileFormat::arrow;
  return FileFormat::text;
}

Compression detect_compression(const std::string& path) {
  if (path.ends_with(".gz")) return Compression::gzip;
  if (path.ends_with(".zst") || path.ends_with(".zstd")) return Compression::zstd;
  return Compression::none;
}

std::string describe_place(const CorpusFile& file, int64_t line) {
  return is_table(file.format) ? file.path + ": row " + std::to_string(line)
                               : file.path + ":" + std::to_string(line);
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
        auto saved = saved_dataset_files(pattern, key);
        if (saved.empty()) {
          throw DataError(key + ": '" + pattern + "' is a directory (give files or a glob such as '" +
                          pattern + "/*.txt', or a directory datasets' save_to_disk wrote)");
        }
        paths.insert(paths.end(), saved.begin(), saved.end());
        continue;
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
    CorpusFile file{path, detect_format(path, options.format), detect_compression(path)};
    check_signature(file, key);
    if (file.format != FileFormat::parquet && file.format != FileFormat::arrow) {  // bytes of text
      if (looks_binary(file, key)) {
        if (options.on_bad_record == config::BadRecordPolicy::error) {
          throw DataError(key + ": '" + path + "' is a binary file (NUL bytes in its first 64 KiB)");
        }
        log::warn("data", "skipping binary file '{}' (NUL bytes in its first 64 KiB)", path);
        continue;
      }
    }
    if (is_table(file.format)) {  // its text column, checked before a run writes anything
      try {
        open_table_batches(file, options.text_field, 0);
      } catch (const DataError& e) {
        throw DataError(key + ": " + e.what());
      }
    }
    files.push_back(std::move(file));
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

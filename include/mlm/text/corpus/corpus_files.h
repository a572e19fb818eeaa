#pragma once
// The corpus as a list of checked files: globs expanded, every path verified readable and
// not binary before any training starts, format decided per file.
#include <string>
#include <vector>

#include "mlm/config/sections/data.h"

namespace mlm::text {

enum class FileFormat { text, jsonl };

/// How documents are cut out of files (the data.* keys that concern reading).
struct ReadOptions {
  config::DataFormat format = config::DataFormat::auto_detect;
  config::DocSeparator doc_separator = config::DocSeparator::blank_line;
  std::string text_field = "text";
  config::BadRecordPolicy on_bad_record = config::BadRecordPolicy::skip;

  static ReadOptions from(const config::DataConfig& data);
};

struct CorpusFile {
  std::string path;
  FileFormat format = FileFormat::text;
};

/// .jsonl/.json/.ndjson (optionally .gz) are JSON Lines under format auto; anything else text.
FileFormat detect_format(const std::string& path, config::DataFormat configured);

/// Expands `patterns` (paths or globs, each glob's matches sorted) in order. Throws DataError
/// naming `key` and the pattern for a missing file, a glob matching nothing, a directory or
/// an unreadable file. A binary file (a NUL byte in its first 64 KiB) is skipped with a
/// warning, or a DataError under on_bad_record: error. Throws DataError when nothing is left.
std::vector<CorpusFile> resolve_corpus(const std::vector<std::string>& patterns,
                                       const ReadOptions& options, const std::string& key);

/// A stable fingerprint of the file list (paths in order), stored in data positions.
uint64_t corpus_fingerprint(const std::vector<CorpusFile>& files);

}  // namespace mlm::text

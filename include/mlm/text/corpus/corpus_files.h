#pragma once
// The corpus as a list of checked files: globs expanded, every path verified readable and of
// the format its name (or data.format) says before any training starts, format decided per
// file.
#include <string>
#include <vector>

#include "mlm/config/sections/data.h"

namespace mlm::text {

/// How documents are laid out: lines of bytes (text, jsonl) or rows of a table, one document
/// per row in the column data.text_field names (csv, tsv, parquet, arrow).
enum class FileFormat { text, jsonl, csv, tsv, parquet, arrow };
/// What wraps a byte format (text, jsonl, csv, tsv); Parquet and Arrow compress inside.
enum class Compression { none, gzip, zstd };

/// A position in a table is a row index; in the other formats an uncompressed byte offset.
bool is_table(FileFormat format);
const char* format_name(FileFormat format);

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
  Compression compression = Compression::none;
};

/// Under format auto, by the name without its .gz/.zst: .jsonl/.json/.ndjson are JSON Lines,
/// .csv and .tsv tables with a header, .parquet Parquet, .arrow Arrow IPC; anything else text.
FileFormat detect_format(const std::string& path, config::DataFormat configured);
/// .gz gzip, .zst/.zstd zstd, anything else none.
Compression detect_compression(const std::string& path);

/// Where a document of `file` starts, for messages: "path:line" for the line formats, "path:
/// row N" for tables (a table's `line` is its 1-based row).
std::string describe_place(const CorpusFile& file, int64_t line);

/// Expands `patterns` (paths or globs, each glob's matches sorted) in order; a directory that
/// `datasets`' save_to_disk wrote (a state.json beside its .arrow files) stands for its data
/// files. Throws DataError naming `key` and the pattern for a missing file, a glob matching
/// nothing, another directory or an unreadable file, and naming the file when its first bytes
/// are not the format or compression its name says (a .parquet that is not Parquet, a .zst
/// that is not zstd, a text file that is Parquet, Arrow or zstd). A binary text file (a NUL
/// byte in its first 64 KiB of text) is skipped with a warning, or a DataError under
/// on_bad_record: error. Throws DataError when nothing is left.
std::vector<CorpusFile> resolve_corpus(const std::vector<std::string>& patterns,
                                       const ReadOptions& options, const std::string& key);

/// A stable fingerprint of the file list (paths in order), stored in data positions.
uint64_t corpus_fingerprint(const std::vector<CorpusFile>& files);

}  // namespace mlm::text

#pragma once
// The files likelihood scoring reads: sentences (one per line, or JSON Lines with a "sentence"
// or "text" field: a .jsonl or .json file) and minimal pairs (JSON Lines with "sentence_good",
// "sentence_bad" and optionally "phenomenon", BLiMP's fields). A bad file is one DataError
// (exit 2) naming the file and the line.
#include <cstdint>
#include <string>
#include <vector>

namespace mlm::train::likelihood {

struct Sentence {
  std::string text;
  int64_t line = 0;  // 1-based, in its file
};

struct MinimalPair {
  std::string good, bad;
  std::string phenomenon;  // "" when the line names none
  int64_t line = 0;
};

/// The first `limit` sentences of `path` (0 = all). A plain text file's blank lines are
/// skipped. DataError for an unreadable file, one holding no sentence, a JSON Lines line that
/// is not a JSON object or lacks a non-empty string "sentence" / "text".
std::vector<Sentence> read_sentences(const std::string& path, int64_t limit = 0);

/// The first `limit` pairs of `path` (0 = all); blank lines skipped. DataError for an
/// unreadable or empty file, a line that is not a JSON object, or one without both sentences
/// as non-empty strings.
std::vector<MinimalPair> read_minimal_pairs(const std::string& path, int64_t limit = 0);

}  // namespace mlm::train::likelihood

#pragma once
// The WordPiece reference of tests/reference/wordpiece_reference.py, made once per test binary
// by the project venv's Python (transformers, tokenizers): varied lines, a vocabulary trained
// on the fixture corpus, and BertTokenizerFast's ids for several normalizer settings.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlm/test_paths.h"
#include "text/tokenizer_fixture.h"

namespace mlm::testing {

inline std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Runs tests/reference/wordpiece_reference.py with `args`; throws with its stderr on failure.
inline void run_wordpiece_reference(const std::vector<std::string>& args,
                                    const std::filesystem::path& stderr_file) {
  std::string command = quoted(MLM_PYTHON) + " " +
                        quoted(std::string(MLM_SOURCE_DIR) + "/tests/reference/wordpiece_reference.py");
  for (const auto& arg : args) command += " " + quoted(arg);
  command += " 2>" + quoted(stderr_file.string()) + " </dev/null";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("wordpiece_reference.py failed: " + read_text(stderr_file));
  }
}

/// The reference directory (see the script's docstring), removed when the binary exits.
inline const std::filesystem::path& wordpiece_reference_dir() {
  struct Dir {
    std::filesystem::path path = make_temp_dir("wordpiece_reference");
    Dir() { run_wordpiece_reference({"make", MLM_FIXTURES_DIR, path.string()}, path / "make.err"); }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  return dir.path;
}

/// One JSON value per line.
inline std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace mlm::testing

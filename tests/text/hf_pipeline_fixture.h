#pragma once
// The reference of tests/text/hf_pipeline_reference.py, made once per test binary by the
// project venv's Python (tokenizers, sentencepiece): varied lines, tokenizers of several kinds
// trained on the fixture corpus, and the ids the `tokenizers` library gives for every line.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "mlm/util/fnv1a.h"
#include "text/varied_texts.h"
#include "text/wordpiece_fixture.h"

namespace mlm::testing {

/// Lines a tokenizer could get wrong beyond varied_texts: long words, digit runs, whitespace
/// runs and kinds, special and added tokens written in the text, byte-piece look-alikes.
inline std::vector<std::string> hf_extra_lines() {
  std::vector<std::string> out = {
      "<s>", "</s>", "<mask>", " <mask>", "a <mask> b", "a<mask>b", "[MASK]", "x [MASK]  y", "[CLS] a [SEP]",
      "<s>hello</s> world", "<unk> <pad>", "|||IP_ADDRESS||| 10.0.0.1", "a|||IP_ADDRESS|||b",
      "<0x41><0xE3>", "\xE2\x96\x81\xE2\x96\x81", "<|endoftext|>text<|padding|>", "don't you're we've I'm he'll she'd",
      "DON'T YOU'RE", "``quoted''", "e\xCC\x81" "e\xCC\x81" "e\xCC\x81", "\r\n\r\n", "a\r\nb", "a \n\n b",
      "the theme them the", "xthe the_ the.", "singing  ing sing ing", "CAFÉ café Café CAFÉS", "ended ed ed  x",
      "<sep>  <sep>x", " <se <sep <sep>", "\xEF\xBC\xA6\xEF\xBD\x95\xEF\xBD\x8C\xEF\xBD\x8C full FULL",
  };
  // Where tokenizers' Precompiled differs from sentencepiece: ours must follow tokenizers.
  for (auto& line : precompiled_differences(true, true)) out.push_back(line);
  std::mt19937 rng(28);
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  for (int n : {30, 80, 101, 150, 400}) {
    std::string word;
    for (int k = 0; k < n; ++k) word += letters[rng() % letters.size()];
    out.push_back(word);
    out.push_back("pre " + word + " post");
  }
  for (int n : {1, 2, 3, 4, 7, 12, 25, 60}) {
    std::string digits;
    for (int k = 0; k < n; ++k) digits += char('0' + rng() % 10);
    out.push_back(digits);
    out.push_back("v" + digits + "x " + digits + "." + digits);
  }
  for (int n : {2, 3, 4, 5, 8, 9, 16, 24, 25, 30}) {
    out.push_back("a" + std::string(n, ' ') + "b");
    out.push_back(std::string(n, ' ') + "lead");
    out.push_back("trail" + std::string(n, ' '));
    out.push_back("t" + std::string(n, '\t') + "n" + std::string(n % 4, '\n') + "z");
  }
  return out;
}

inline const std::vector<std::string>& hf_lines() {
  static const std::vector<std::string> lines = [] {
    auto out = varied_texts(3000);
    for (auto& l : hf_extra_lines()) out.push_back(l);
    return out;
  }();
  return lines;
}

/// The reference directory (see the script's docstring). ctest runs every test in a process
/// of its own, so it is made once per build and kept there, under the hash of the script, the
/// corpus and the lines (any change makes a new one); made in a temporary directory beside it
/// and renamed into place, so concurrent tests never read a half-written one.
inline const std::filesystem::path& hf_reference_dir() {
  static const std::filesystem::path dir = [] {
    namespace fs = std::filesystem;
    const std::string script = std::string(MLM_SOURCE_DIR) + "/tests/text/hf_pipeline_reference.py";
    Fnv1a hash;
    hash.mix(read_text(script)).mix(read_text(corpus_path("train.txt")));
    for (const auto& line : hf_lines()) hash.mix(line).mix("\n");
    const fs::path done = fs::path(MLM_BINARY_DIR) / "test-text" / ("hf_pipeline_reference-" + hash.hex());
    if (fs::exists(done / "DONE")) return done;
    fs::create_directories(done.parent_path());
    const fs::path path = done.string() + ".tmp-" + std::to_string(::getpid());
    fs::remove_all(path);
    fs::create_directories(path);
    {
      std::ofstream out(path / "lines.jsonl");
      for (const auto& line : hf_lines()) out << nlohmann::json(line).dump() << "\n";
    }
    const std::string command = quoted(MLM_PYTHON) + " " + quoted(script) + " " + quoted(corpus_path("train.txt")) +
                                " " + quoted((path / "lines.jsonl").string()) + " " + quoted(path.string()) + " 2>" +
                                quoted((path / "make.err").string()) + " </dev/null";
    if (std::system(command.c_str()) != 0) {
      throw std::runtime_error("hf_pipeline_reference.py failed: " + read_text(path / "make.err"));
    }
    std::ofstream(path / "DONE") << "complete\n";
    std::error_code taken;  // another test's copy may have landed first: use that one
    fs::rename(path, done, taken);
    if (taken) fs::remove_all(path);
    return done;
  }();
  return dir;
}

}  // namespace mlm::testing

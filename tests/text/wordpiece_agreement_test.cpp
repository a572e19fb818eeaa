// The WordPiece tokenizer against transformers' BertTokenizerFast itself, llm.c style: the
// reference script tokenizes a few thousand varied lines (tests/reference/wordpiece_reference.py)
// for five normalizer settings; every line must give the same ids, [CLS] and [SEP] included.
// The same ids come from the HF tokenizer.json of each setting, and the tokenizer.json this
// project writes gives them again when transformers loads it.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>

#include "mlm/text/tokenizer.h"
#include "mlm/text/wordpiece/wordpiece.h"
#include "mlm/text/wordpiece/wordpiece_files.h"
#include "text/wordpiece_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other text tests, whose anonymous-namespace helpers have the same names.
namespace mlm::text::wordpiece_agreement {

namespace fs = std::filesystem;
using mlm::testing::read_json_lines;
using mlm::testing::wordpiece_reference_dir;

struct Setting {
  std::string name;  // a case directory of the reference
  bool lowercase;
  std::optional<bool> strip_accents;
  bool chinese;
};

void PrintTo(const Setting& s, std::ostream* os) { *os << s.name; }

const std::vector<std::string>& lines() {
  static const auto out = [] {
    std::vector<std::string> lines;
    for (const auto& json : read_json_lines(wordpiece_reference_dir() / "lines.jsonl")) {
      lines.push_back(json.get<std::string>());
    }
    return lines;
  }();
  return out;
}

std::vector<int32_t> with_specials(const Tokenizer& tokenizer, const std::string& line) {
  std::vector<int32_t> ids = {tokenizer.vocab().ids.cls};
  const auto body = tokenizer.encode(line);
  ids.insert(ids.end(), body.begin(), body.end());
  ids.push_back(tokenizer.vocab().ids.sep);
  return ids;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

/// How many lines `tokenizer` gives `want` for; prints the first few that differ.
size_t count_agreeing(const Tokenizer& tokenizer, const std::vector<std::vector<int32_t>>& want,
                      const std::string& what) {
  EXPECT_EQ(want.size(), lines().size());
  size_t agree = 0, shown = 0;
  for (size_t i = 0; i < std::min(want.size(), lines().size()); ++i) {
    const auto got = with_specials(tokenizer, lines()[i]);
    if (got == want[i]) {
      ++agree;
    } else if (shown++ < 5) {
      ADD_FAILURE() << what << ", line " << i << ": " << nlohmann::json(lines()[i]).dump()
                    << "\n  ours: " << show(got) << "\n  HF:   " << show(want[i]);
    }
  }
  std::printf("[wordpiece] %s: %zu of %zu lines agree\n", what.c_str(), agree, want.size());
  return agree;
}

std::vector<std::vector<int32_t>> reference_ids(const fs::path& path) {
  std::vector<std::vector<int32_t>> out;
  for (const auto& json : read_json_lines(path)) out.push_back(json.get<std::vector<int32_t>>());
  return out;
}

class WordPieceAgreement : public ::testing::TestWithParam<Setting> {
 protected:
  fs::path dir() const { return wordpiece_reference_dir() / GetParam().name; }
};

TEST_P(WordPieceAgreement, VocabTxtWithItsConfigGivesBertTokenizerFastIdsOnEveryLine) {
  const Setting& s = GetParam();
  const auto tokenizer = Tokenizer::load((dir() / "vocab.txt").string());
  ASSERT_EQ(tokenizer.kind(), TokenizerKind::wordpiece);
  const auto& options = tokenizer.wordpiece()->options().normalizer;
  EXPECT_EQ(options.lowercase, s.lowercase);
  EXPECT_EQ(options.strip_accents, s.strip_accents);
  EXPECT_EQ(options.handle_chinese_chars, s.chinese);
  ASSERT_GE(lines().size(), 3000u);
  const auto want = reference_ids(dir() / "ids.jsonl");
  EXPECT_EQ(count_agreeing(tokenizer, want, s.name + " vocab.txt"), want.size());
}

TEST_P(WordPieceAgreement, HfTokenizerJsonGivesTheSameIds) {
  const auto from_vocab = Tokenizer::load((dir() / "vocab.txt").string());
  const auto from_json = Tokenizer::load((dir() / "tokenizer.json").string());
  EXPECT_EQ(from_json.size(), from_vocab.size());
  EXPECT_EQ(from_json.serialized_model(), from_vocab.serialized_model());
  const auto want = reference_ids(dir() / "ids.jsonl");
  EXPECT_EQ(count_agreeing(from_json, want, GetParam().name + " tokenizer.json"), want.size());
}

TEST_P(WordPieceAgreement, TheTokenizerJsonWeWriteGivesTheSameIdsInTransformers) {
  const auto tokenizer = Tokenizer::load((dir() / "vocab.txt").string());
  const fs::path written = dir() / "written_tokenizer.json";
  std::ofstream(written) << wordpiece_tokenizer_json(tokenizer).dump(2);
  const fs::path result = dir() / "written_ids.jsonl";
  mlm::testing::run_wordpiece_reference(
      {"check", written.string(), (wordpiece_reference_dir() / "lines.jsonl").string(),
       result.string()},
      dir() / "check.err");
  std::vector<std::vector<int32_t>> generic, bert;
  for (const auto& pair : read_json_lines(result)) {
    generic.push_back(pair.at(0).get<std::vector<int32_t>>());
    bert.push_back(pair.at(1).get<std::vector<int32_t>>());
  }
  const std::string name = GetParam().name;
  EXPECT_EQ(count_agreeing(tokenizer, generic, name + " PreTrainedTokenizerFast(ours)"), generic.size());
  EXPECT_EQ(count_agreeing(tokenizer, bert, name + " BertTokenizerFast(ours)"), bert.size());
}

INSTANTIATE_TEST_SUITE_P(Settings, WordPieceAgreement,
                         ::testing::Values(Setting{"uncased", true, std::nullopt, true},
                                           Setting{"cased", false, std::nullopt, true},
                                           Setting{"cased_strip", false, true, true},
                                           Setting{"cased_nostrip", false, false, true},
                                           Setting{"uncased_nochinese", true, std::nullopt, false}),
                         [](const auto& info) { return info.param.name; });

}  // namespace mlm::text::wordpiece_agreement

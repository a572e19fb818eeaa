// BertNormalizer and BertPreTokenizer on every code point against tokenizers itself: for
// each code point c and three settings, the words of "a" c "b" (tests/reference/
// wordpiece_reference.py sweep). This is where the Unicode versions of the Rust crates behind
// tokenizers (Unicode 8.0 categories, current case mapping) show; see src/text/bert_chars.h.
// Slow (about a minute of Python): the suite name ends in "Slow".
#include <gtest/gtest.h>

#include "mlm/text/utf8.h"

#include <map>
#include <sstream>

#include "mlm/text/wordpiece/wordpiece.h"
#include "text/wordpiece_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other text tests, whose anonymous-namespace helpers have the same names.
namespace mlm::text::wordpiece_unicode {

std::string utf8(char32_t c) {
  std::string out;
  append_utf8(out, c);
  return out;
}

TEST(WordPieceUnicodeSlow, EveryCodePointSplitsAsTokenizersSplitsIt) {
  const auto dir = mlm::testing::make_temp_dir("wordpiece_sweep");
  const auto table = dir / "sweep.tsv";
  mlm::testing::run_wordpiece_reference({"sweep", table.string()}, dir / "sweep.err");
  // setting -> code point -> words, where they are not just "a" c "b".
  std::map<std::string, std::map<char32_t, std::vector<std::string>>> reference;
  std::istringstream rows(mlm::testing::read_text(table));
  for (std::string setting, hex, words; std::getline(rows, setting, '\t') &&
                                         std::getline(rows, hex, '\t') && std::getline(rows, words);) {
    reference[setting][static_cast<char32_t>(std::stoul(hex, nullptr, 16))] =
        nlohmann::json::parse(words).get<std::vector<std::string>>();
  }
  std::filesystem::remove_all(dir);
  const std::map<std::string, BertNormalizerOptions> settings = {
      {"all", {true, true, std::nullopt, true}},
      {"none", {false, false, false, false}},
      {"clean_lower", {true, false, false, true}},
  };
  ASSERT_EQ(reference.size(), settings.size());
  for (const auto& [name, options] : settings) {
    const auto& want_of = reference[name];
    ASSERT_GT(want_of.size(), 500u) << name;  // at least the punctuation and whitespace
    size_t agree = 0, total = 0, shown = 0;
    for (char32_t c = 0; c < 0x110000; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      const std::string text = "a" + utf8(c) + "b";
      const auto it = want_of.find(c);
      const std::vector<std::string> want = it == want_of.end() ? std::vector<std::string>{text} : it->second;
      const auto got = bert_words(text, options);
      ++total;
      if (got == want) {
        ++agree;
      } else if (shown++ < 10) {
        ADD_FAILURE() << name << ": U+" << std::hex << static_cast<uint32_t>(c) << " gives "
                      << nlohmann::json(got).dump() << ", tokenizers " << nlohmann::json(want).dump();
      }
    }
    std::printf("[wordpiece] %s: %zu of %zu code points agree\n", name.c_str(), agree, total);
    EXPECT_EQ(agree, total) << name;
  }
}

}  // namespace mlm::text::wordpiece_unicode

#pragma once
// Texts to compare two tokenizers on: the fixture corpus, hand-picked Unicode and whitespace
// cases, and seeded random mixtures of both.
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mlm/text/utf8.h"
#include "text/tokenizer_fixture.h"

namespace mlm::testing {

// Cases a tokenizer could get wrong: case and accents (precomposed and combining), NFKC
// compatibility forms, scripts outside the fixture corpus's vocabulary, emoji sequences,
// whitespace runs and kinds, control characters, the space marker U+2581, empty text.
inline const std::vector<std::string>& unicode_cases() {
  static const std::vector<std::string> cases = {
      "", " ", "   ", "\t", "\n", " hello", "  hello", "hello ", "hello  ", "a  b", "a \t b",
      "a\xE3\x80\x80" "b", "a\xC2\xA0" "b", "x\r\ny", "tab\there", "\xE2\x80\xA8line\xE2\x80\xA9",
      "\xC3\x89" "COLE Caf\xC3\xA9 na\xC3\xAFve", "e\xCC\x81" "cole",  // É, é; e + U+0301
      "\xEF\xAC\x81ne \xEF\xAC\x80 \xE2\x91\xA0\xE2\x91\xA1 \xE3\x8D\xBB \xC2\xBD",  // ﬁ ﬀ ①② ㍻ ½
      "\xEF\xBC\xA6\xEF\xBD\x95\xEF\xBD\x8C\xEF\xBD\x8C\xE3\x80\x80\xEF\xBD\x97\xEF\xBC\x81",  // Ｆｕｌｌ　ｗ！
      "\xEF\xBD\xB6\xEF\xBE\x80\xEF\xBD\xB6\xEF\xBE\x85",  // half-width katakana
      "\xE2\x84\xA2 \xE2\x84\x8C \xE2\x84\xA1", "x\xC2\xA8y", "\xC2\xA8", "a \xC2\xA8",  // ™ ℌ ℡, ¨
      "\xE6\x9D\xB1\xE4\xBA\xAC\xE9\x83\xBD \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE6\x96\x87\xE3\x80\x82",
      "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xED\x85\x8D\xEC\x8A\xA4\xED\x8A\xB8",  // Korean
      "\xF0\x9F\x98\x80\xF0\x9F\x98\x83 \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",  // 😀😃 👍🏽
      "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7",  // family (ZWJ)
      "\xF0\x9F\x87\xBA\xF0\x9F\x87\xB8 flags", "\xE2\x9D\xA4\xEF\xB8\x8F", "1\xEF\xB8\x8F\xE2\x83\xA3",
      "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xD8\xA8\xD8\xA7\xD9\x84\xD8\xB9\xD8\xA7\xD9\x84\xD9\x85",
      "\xD8\xB8\xD9\x8E", "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D", "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82",
      "\xCE\xA3\xCE\x91\xCE\xA3 \xE1\xBD\x88\xCE\x94\xCE\xA5\xCE\xA3\xCE\xA3\xCE\x95\xCE\x8E\xCE\xA3 \xCF\x82",
      "\xC4\xB0stanbul \xC3\x9F \xE1\xBA\x9E \xC5\xBF", "\xC7\x85 \xC7\x88", "\xE2\x85\xAB \xE2\x85\xBB",
      "\xF0\x9D\x94\x98\xF0\x9D\x94\xAB\xF0\x9D\x94\xA6", "\xE2\x82\x81\xE2\x82\x82 x\xC2\xB2 \xC2\xB5 \xE2\x84\xAA",
      "\xE2\x80\xA6 \xE2\x80\xA5", "\xE2\x80\x99quoted\xE2\x80\x99 \xE2\x80\x9C" "dq\xE2\x80\x9D",
      "a\xE2\x80\x94" "b\xE2\x80\x93" "c", "\xE0\xA4\x95\xE0\xA4\xBF \xE0\xA5\x98", "\xE0\xB8\x81\xE0\xB8\xB4",
      "\x01\x02" "abc\x7F", "ctrl\x1B" "char", "a\xE2\x80\x8B" "b", "a\xE2\x80\x8D" "b", "a\xE2\x80\x8C" "b",
      "\xEF\xBB\xBF" "bom", "\xE2\x80\x8E" "lrm", "\xEF\xBF\xBD", "\xC2\x85" "nel", "a \xC2\x85",
      "\xE2\x96\x81", "\xE2\x96\x81hello", "hello\xE2\x96\x81", "a\xE2\x96\x81\xE2\x96\x81" "b",
      "<0x41>", "<0xE3> <0x81>", "[mask]", "[ MASK ]", "MASK", "\xC3\xBC\xCC\x81",  // ü + U+0301
      "\xE1\xB8\x8D\xCC\x87", "q\xCC\x87\xCC\xA3", "\xE1\xBA\xBF \xE1\xBB\x87",
      "zz\xCC\x88\xCC\x88\xCC\x88\xCC\x88", "\xC3\x85 \xE2\x84\xAB", "\xE1\x84\x80",  // Å Å (U+212B), ᄀ
  };
  return cases;
}

// Where tokenizers' Precompiled normalizer differs from sentencepiece (see
// docs/ARCHITECTURE.md, "Hugging Face tokenizer"): a grapheme cluster shorter than 6 bytes
// whose first character has a mapping of its own loses the rest of the cluster; a longer
// cluster is mapped character by character, so sequences that sentencepiece composes stay
// apart (visible in the ids only when the composed character is not [UNK] either way, so
// listed for `byte_fallback`). With `lowercase`, every capital letter has a mapping: a capital
// followed by a combining mark loses the mark.
inline std::vector<std::string> precompiled_differences(bool lowercase, bool byte_fallback) {
  std::vector<std::string> cases = {
      "\xE2\x96\x81\xCC\x80",      // U+2581 U+0300: the accent is lost
      "\xC2\xA0\xCC\x81",          // no-break space + U+0301
      "\xEF\xBC\xA1\xCC\x81",      // Ａ + U+0301
  };
  if (byte_fallback) {
    cases.push_back("\xE3\x81\x8B\xE3\x82\x99");  // か + U+3099, 6 bytes: not composed to が
    cases.push_back("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8");  // jamo, 9 bytes: not 각
  }
  if (lowercase) {
    cases.push_back("E\xCC\x81");  // E + U+0301: "e", where sentencepiece gives "é"
    cases.push_back("A\xCC\x8A");  // A + U+030A: "a", where sentencepiece gives "å"
  }
  return cases;
}

inline std::vector<std::string> corpus_lines() {
  std::vector<std::string> lines;
  for (const char* name : {"train.txt", "valid.txt", "lines.txt"}) {
    std::ifstream in(corpus_path(name));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  return lines;
}

/// The corpus lines, the Unicode cases, then `mixtures` seeded random concatenations of
/// corpus snippets, Unicode cases and ASCII characters, joined with or without spaces.
inline std::vector<std::string> varied_texts(int mixtures) {
  std::vector<std::string> texts = corpus_lines();
  const std::vector<std::string> lines = texts;
  const auto& cases = unicode_cases();
  texts.insert(texts.end(), cases.begin(), cases.end());
  const std::string ascii =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"()-";
  std::mt19937 rng(20261130);
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int i = 0; i < mixtures; ++i) {
    const size_t parts = 1 + pick(12);
    const bool spaced = rng() % 2 == 0;
    std::string text;
    for (size_t k = 0; k < parts; ++k) {
      if (spaced && k > 0) text += ' ';
      switch (pick(3)) {
        case 0: text += ascii[pick(ascii.size())]; break;
        case 1: text += cases[pick(cases.size())]; break;
        default: {
          const std::string& line = lines[pick(lines.size())];
          const size_t begin = pick(std::min<size_t>(line.size(), 20) + 1);
          text += line.substr(begin, 1 + pick(40));
        }
      }
    }
    texts.push_back(text);
  }
  return texts;
}

}  // namespace mlm::testing

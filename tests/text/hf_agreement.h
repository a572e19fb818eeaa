#pragma once
// The agreement check of the hf tests: an HfTokenizer against the reference.jsonl that
// hf_pipeline_reference.py wrote for hf_lines() (ids with and without specials, pairs and
// their token types, word starts, decoded text); prints the counts, fails on any difference.
#include <gtest/gtest.h>

#include <cstdio>

#include "mlm/text/hf/hf_tokenizer.h"
#include "text/hf_pipeline_fixture.h"

namespace mlm::testing {

inline std::string show_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

// starts_word from the library's word_ids: a token whose word differs from the previous one's.
inline std::vector<uint8_t> starts_from_word_ids(const nlohmann::json& words) {
  std::vector<uint8_t> out;
  int64_t previous = -1;
  for (const auto& w : words) {
    const int64_t word = w.is_null() ? -2 : w.get<int64_t>();
    out.push_back(word != previous);
    previous = word;
  }
  return out;
}

/// Every line of hf_lines() must agree with `dir`/reference.jsonl.
inline void expect_library_ids(const text::hf::HfTokenizer& tokenizer, const std::filesystem::path& dir,
                               const std::string& name) {
  const auto reference = read_json_lines(dir / "reference.jsonl");
  const auto& lines = hf_lines();
  ASSERT_EQ(reference.size(), lines.size());
  ASSERT_GE(lines.size(), 4000u);
  size_t ids_ok = 0, plain_ok = 0, pair_ok = 0, words_ok = 0, decode_ok = 0, shown = 0;
  std::vector<int32_t> plain, types;
  std::vector<uint8_t> starts;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto& want = reference[i];
    const auto ids = tokenizer.encode(lines[i], true);
    tokenizer.encode(lines[i], plain, &starts);
    const auto pair = tokenizer.encode_pair(lines[i], lines[(i + 1) % lines.size()], true, &types);
    const auto want_ids = want.at("ids").get<std::vector<int32_t>>();
    const auto want_plain = want.at("plain").get<std::vector<int32_t>>();
    const bool ok_ids = ids == want_ids, ok_plain = plain == want_plain;
    const bool ok_pair = pair == want.at("pair").get<std::vector<int32_t>>() &&
                         types == want.at("types").get<std::vector<int32_t>>();
    const bool ok_words = starts == starts_from_word_ids(want.at("words"));
    const bool ok_decode = tokenizer.decode(ids) == want.at("decoded").get<std::string>();
    ids_ok += ok_ids;
    plain_ok += ok_plain;
    pair_ok += ok_pair;
    words_ok += ok_words;
    decode_ok += ok_decode;
    if (!(ok_ids && ok_plain && ok_pair && ok_words && ok_decode) && shown++ < 5) {
      ADD_FAILURE() << name << ", line " << i << ": " << nlohmann::json(lines[i]).dump()
                    << "\n  ours:    " << show_ids(ids) << "\n  library: " << show_ids(want_ids)
                    << (ok_pair ? "" : "\n  (pair differs)") << (ok_words ? "" : "\n  (word starts differ)")
                    << (ok_decode ? "" : "\n  decoded: " + nlohmann::json(tokenizer.decode(ids)).dump() +
                                             "\n  library: " + want.at("decoded").dump());
    }
  }
  std::printf("[hf] %-24s %zu lines: ids %zu, plain %zu, pair %zu, word starts %zu, decode %zu agree\n",
              name.c_str(), lines.size(), ids_ok, plain_ok, pair_ok, words_ok, decode_ok);
  EXPECT_EQ(ids_ok, lines.size());
  EXPECT_EQ(plain_ok, lines.size());
  EXPECT_EQ(pair_ok, lines.size());
  EXPECT_EQ(words_ok, lines.size());
  EXPECT_EQ(decode_ok, lines.size());
}

}  // namespace mlm::testing

// HfTokenizer against the Python `tokenizers` library on tokenizers trained by it
// (tests/text/hf_pipeline_reference.py): every line of hf_lines() (varied_texts(3000) and
// hf_extra_lines(), 4,500) must give the same ids with and without the post-processor's
// specials, the same ids and token types for a pair, the same word starts, and the same
// decoded text.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>

#include "mlm/text/hf/hf_tokenizer.h"
#include "text/hf_pipeline_fixture.h"

// A named namespace: the unity build compiles the text tests together.
namespace mlm::text::hf_pipeline_agreement {

namespace fs = std::filesystem;
using hf::HfTokenizer;
using mlm::testing::hf_lines;
using mlm::testing::hf_reference_dir;
using mlm::testing::read_json_lines;

std::string show(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

// starts_word from the library's word_ids: a token whose word differs from the previous one's.
std::vector<uint8_t> starts_from_word_ids(const nlohmann::json& words) {
  std::vector<uint8_t> out;
  int64_t previous = -1;
  for (const auto& w : words) {
    const int64_t word = w.is_null() ? -2 : w.get<int64_t>();
    out.push_back(word != previous);
    previous = word;
  }
  return out;
}

class HfTokenizerAgreement : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path dir() const { return hf_reference_dir() / GetParam(); }
};

TEST_P(HfTokenizerAgreement, GivesTheLibrarysIdsOnEveryLine) {
  const auto tokenizer = HfTokenizer::load(dir().string());
  const auto reference = read_json_lines(dir() / "reference.jsonl");
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
      ADD_FAILURE() << GetParam() << ", line " << i << ": " << nlohmann::json(lines[i]).dump()
                    << "\n  ours:    " << show(ids) << "\n  library: " << show(want_ids)
                    << (ok_pair ? "" : "\n  (pair differs)") << (ok_words ? "" : "\n  (word starts differ)")
                    << (ok_decode ? "" : "\n  decoded: " + nlohmann::json(tokenizer.decode(ids)).dump() +
                                             "\n  library: " + want.at("decoded").dump());
    }
  }
  std::printf("[hf] %-24s %zu lines: ids %zu, plain %zu, pair %zu, word starts %zu, decode %zu agree\n",
              GetParam().c_str(), lines.size(), ids_ok, plain_ok, pair_ok, words_ok, decode_ok);
  EXPECT_EQ(ids_ok, lines.size());
  EXPECT_EQ(plain_ok, lines.size());
  EXPECT_EQ(pair_ok, lines.size());
  EXPECT_EQ(words_ok, lines.size());
  EXPECT_EQ(decode_ok, lines.size());
}

double seconds_to_encode(const std::vector<std::string>& lines, const std::function<void(const std::string&)>& encode) {
  const auto start = std::chrono::steady_clock::now();
  for (const auto& line : lines) encode(line);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A figure, not a pass/fail check (the machine may be busy): one core, all lines once cold
// and once more warm (the library's timed passes ran warm, its word cache filled).
TEST_P(HfTokenizerAgreement, PrintsTheEncodeSpeedBesideTheLibrarysAndSentencepieces) {
  const auto tokenizer = HfTokenizer::load(dir().string());
  const auto speed = nlohmann::json::parse(mlm::testing::read_text(dir() / "speed.json"));
  const auto& lines = hf_lines();
  std::vector<int32_t> ids;
  const auto ours = [&](const std::string& line) { tokenizer.encode(line, ids); };
  const double cold = seconds_to_encode(lines, ours), warm = seconds_to_encode(lines, ours);
  const auto& spm = mlm::testing::fixture_tokenizer();
  const double sentencepiece = seconds_to_encode(lines, [&](const std::string& line) { spm.encode(line, ids); });
  const double mb = speed.at("bytes").get<double>() / 1e6;
  std::printf("[hf] %-22s %.2f MB, MB/s: ours %.1f cold %.1f warm; tokenizers %.1f per call, %.1f batch; "
              "sentencepiece (fixture) %.1f\n",
              GetParam().c_str(), mb, mb / cold, mb / warm, mb / speed.at("seconds").get<double>(),
              mb / speed.at("batch_seconds").get<double>(), mb / sentencepiece);
}

INSTANTIATE_TEST_SUITE_P(HfTokenizerKinds, HfTokenizerAgreement,
                         ::testing::Values("roberta", "modernbert", "mistral", "llama", "xlmr",
                                           "unigram_byte_fallback", "bert", "bpe_options", "llama3_split",
                                           "split_behaviors", "split_removed_inverted", "whitespace_digits",
                                           "whitespace_split_bert", "added_token_options", "metaspace_never",
                                           "metaspace_always"),
                         [](const auto& info) { return info.param; });

}  // namespace mlm::text::hf_pipeline_agreement

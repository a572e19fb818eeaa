// HfTokenizer against the Python `tokenizers` library on tokenizers trained by it
// (tests/text/hf_pipeline_reference.py): every line of hf_lines() (varied_texts(3000) and
// hf_extra_lines(), 4,500) must give the same ids with and without the post-processor's
// specials, the same ids and token types for a pair, the same word starts, and the same
// decoded text.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <algorithm>
#include <functional>

#include "mlm/text/hf/hf_tokenizer.h"
#include "text/hf_agreement.h"

// A named namespace: the unity build compiles the text tests together.
namespace mlm::text::hf_pipeline_agreement {

namespace fs = std::filesystem;
using hf::HfTokenizer;
using mlm::testing::hf_lines;
using mlm::testing::hf_reference_dir;
using mlm::testing::read_json_lines;

class HfTokenizerAgreement : public ::testing::TestWithParam<std::string> {
 protected:
  fs::path dir() const { return hf_reference_dir() / GetParam(); }
};

TEST_P(HfTokenizerAgreement, GivesTheLibrarysIdsOnEveryLine) {
  mlm::testing::expect_library_ids(HfTokenizer::load(dir().string()), dir(), GetParam());
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

// Every component class of the library's modules (tokenizers.normalizers, pre_tokenizers,
// models, processors, decoders), as the reference script enumerates them, must be a type the
// reader's tables hold: a new library version fails here with what it added.
TEST(HfTokenizerComponents, ReadsEveryComponentClassOfTheLibrary) {
  const auto library = nlohmann::json::parse(mlm::testing::read_text(hf_reference_dir() / "classes.json"));
  const auto ours = HfTokenizer::component_types();
  size_t classes = 0;
  for (const auto& [module, names] : library.at("classes").items()) {
    const auto read = ours.find(module);
    ASSERT_NE(read, ours.end()) << "no table for tokenizers." << module;
    for (const auto& name : names) {
      ++classes;
      EXPECT_NE(std::find(read->second.begin(), read->second.end(), name.get<std::string>()), read->second.end())
          << "tokenizers " << library.at("version").get<std::string>() << ": " << module << "."
          << name.get<std::string>() << " is not read";
    }
  }
  std::printf("[hf] tokenizers %s: %zu component classes, all read\n", library.at("version").get<std::string>().c_str(),
              classes);
  EXPECT_GE(classes, 40u);  // the enumeration found the modules' classes
}

INSTANTIATE_TEST_SUITE_P(HfTokenizerKinds, HfTokenizerAgreement,
                         ::testing::Values("roberta", "modernbert", "mistral", "llama", "xlmr",
                                           "unigram_byte_fallback", "bert", "bpe_options", "llama3_split",
                                           "split_behaviors", "split_removed_inverted", "whitespace_digits",
                                           "whitespace_split_bert", "added_token_options", "metaspace_never",
                                           "metaspace_always", "sentencepiece_bpe", "sentencepiece_unigram",
                                           "word_level", "word_level_whitespace", "ctc_characters",
                                           "unicode_scripts", "unicode_scripts_split", "fixed_length",
                                           "fixed_length_default", "byte_level_normalizer"),
                         [](const auto& info) { return info.param; });

}  // namespace mlm::text::hf_pipeline_agreement

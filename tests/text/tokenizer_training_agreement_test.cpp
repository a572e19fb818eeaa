// Tokenizers mlm-train trains (byte_level_bpe as RoBERTa and ModernBERT, wordpiece as BERT
// uncased and cased) against the `tokenizers` library (tests/text/tokenizer_training_reference.py):
// the library and transformers.AutoTokenizer load the written directory and give mlm-train's
// own ids on every held-out line; the library's own trainer, at the same size and settings on
// the same lines, learns the same merges (byte-level BPE) or nearly the same vocabulary
// (WordPiece: the library numbers "##" characters in hash-map order, so two of its own runs
// differ too), and tokens per byte within 1%.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

#include "mlm/text/tokenizer.h"
#include "text/tokenizer_fixture.h"
#include "text/wordpiece_fixture.h"

namespace mlm::text::tokenizer_training_agreement {

namespace fs = std::filesystem;

struct Kind {
  const char* name;
  config::TokenizerType type;
  config::SpecialTokenStyle style;
  bool lowercase;
};

class TrainedTokenizerAgreement : public ::testing::TestWithParam<Kind> {};

TEST_P(TrainedTokenizerAgreement, LibraryAndAutoTokenizerGiveOurIdsAndItsTrainerOurVocabulary) {
  const Kind kind = GetParam();
  const fs::path dir = testing::make_temp_dir(std::string("trained_") + kind.name);
  config::TokenizerConfig c;
  c.type = kind.type;
  c.special_tokens = kind.style;
  c.lowercase = kind.lowercase;
  c.model = (dir / "tokenizer").string();
  c.vocab_size = 800;
  config::DataConfig data;
  data.train_files = {testing::corpus_path("train.txt")};
  const Tokenizer tokenizer = load_or_train_tokenizer(c, data);

  const fs::path out = dir / "reference.json";
  const std::string command =
      testing::quoted(MLM_PYTHON) + " " +
      testing::quoted(std::string(MLM_SOURCE_DIR) + "/tests/text/tokenizer_training_reference.py") + " " + kind.name +
      " " + testing::quoted(c.model) + " " + testing::quoted(testing::corpus_path("train.txt")) + " " +
      testing::quoted(testing::corpus_path("valid.txt")) + " " + testing::quoted(out.string()) + " 2>" +
      testing::quoted((dir / "err.txt").string()) + " </dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << testing::read_text(dir / "err.txt");
  const auto reference = nlohmann::json::parse(testing::read_text(out));

  std::vector<std::string> lines;
  {
    std::ifstream in(testing::corpus_path("valid.txt"));
    for (std::string line; std::getline(in, line);) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    }
  }
  ASSERT_EQ(reference["ids"].size(), lines.size());
  size_t differ = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto ids = tokenizer.encode(lines[i]);
    std::vector<int32_t> with_specials = {tokenizer.vocab().ids.cls};
    with_specials.insert(with_specials.end(), ids.begin(), ids.end());
    with_specials.push_back(tokenizer.vocab().ids.sep);
    const bool same = reference["ids"][i].get<std::vector<int32_t>>() == ids &&
                      reference["auto_ids"][i].get<std::vector<int32_t>>() == with_specials;
    if (!same && differ++ < 3) ADD_FAILURE() << "line " << i << " differs: " << lines[i];
  }
  EXPECT_EQ(differ, 0u) << "of " << lines.size() << " lines";

  const double ours = reference["tokens_per_byte"]["ours"], library = reference["tokens_per_byte"]["library"];
  EXPECT_LT(std::abs(ours - library), 0.01 * library) << "tokens per byte: ours " << ours << ", library " << library;
  if (kind.type == config::TokenizerType::byte_level_bpe) {
    EXPECT_EQ(reference["vocab_size"]["ours"], reference["vocab_size"]["library"]);
    EXPECT_TRUE(reference["same_merges"].get<bool>()) << "merges equal up to " << reference["merges_equal_prefix"];
    EXPECT_TRUE(reference["same_vocab"].get<bool>());
  } else {
    // Ties taken in another order can end training (min_frequency) a few pieces apart.
    EXPECT_NEAR(reference["vocab_size"]["ours"].get<double>(), reference["vocab_size"]["library"].get<double>(),
                0.01 * reference["vocab_size"]["library"].get<double>());
    EXPECT_GE(reference["vocab_overlap"].get<double>(), 0.9);
  }
  std::printf("[train] %-10s vocab overlap with tokenizers' trainer %.4f, tokens/byte ours %.5f library %.5f\n",
              kind.name, reference["vocab_overlap"].get<double>(), ours, library);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, TrainedTokenizerAgreement,
    ::testing::Values(
        Kind{"roberta", config::TokenizerType::byte_level_bpe, config::SpecialTokenStyle::roberta, false},
        Kind{"modernbert", config::TokenizerType::byte_level_bpe, config::SpecialTokenStyle::modernbert, false},
        Kind{"bert", config::TokenizerType::wordpiece, config::SpecialTokenStyle::bert, true},
        Kind{"bert_cased", config::TokenizerType::wordpiece, config::SpecialTokenStyle::automatic, false}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::text::tokenizer_training_agreement

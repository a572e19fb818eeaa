// HfTokenizer on the tokenizer files mlm-train exports for its own sentencepiece models
// (text/hf/hf_tokenizer_files.h: Precompiled with sentencepiece's real normalization table,
// Metaspace, Unigram or BPE with merges ranked by score, byte fallback): the `tokenizers`
// library's ids on every line of hf_lines(), and the special-token roles of the files.
#include <gtest/gtest.h>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/hf/hf_tokenizer_files.h"
#include "text/hf_agreement.h"

namespace mlm::text::hf_tokenizer_exports {

namespace fs = std::filesystem;

struct Export {
  const char* name;
  config::TokenizerType type;
  int64_t vocab_size;
  bool lowercase;
  bool byte_fallback;
};

void PrintTo(const Export& e, std::ostream* os) { *os << e.name; }

class HfTokenizerOnOurExports : public ::testing::TestWithParam<Export> {};

TEST_P(HfTokenizerOnOurExports, GiveTheLibrarysIdsAndTheModelsSpecialIds) {
  const Export& e = GetParam();
  const fs::path dir = mlm::testing::hf_reference_dir() / (std::string("export_") + e.name);
  fs::create_directories(dir);
  auto c = mlm::testing::small_tokenizer_config((dir / "spm.model").string());
  c.type = e.type;
  c.vocab_size = e.vocab_size;
  c.lowercase = e.lowercase;
  c.byte_fallback = e.byte_fallback;
  Tokenizer::train(c, {mlm::testing::corpus_path("train.txt")});
  const auto spm = Tokenizer::load(c.model);
  write_hf_tokenizer(spm, dir.string(), 512);
  const std::string command =
      mlm::testing::quoted(MLM_PYTHON) + " " +
      mlm::testing::quoted(std::string(MLM_SOURCE_DIR) + "/tests/text/hf_pipeline_reference.py") + " encode " +
      mlm::testing::quoted(dir.string()) + " " +
      mlm::testing::quoted((mlm::testing::hf_reference_dir() / "lines.jsonl").string()) + " 2>" +
      mlm::testing::quoted((dir / "encode.err").string()) + " </dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << mlm::testing::read_text(dir / "encode.err");

  const auto tokenizer = hf::HfTokenizer::load(dir.string());
  EXPECT_EQ(tokenizer.model_type(), e.type == config::TokenizerType::bpe ? "BPE" : "Unigram");
  EXPECT_EQ(tokenizer.vocab_size(), spm.size());
  const auto& roles = tokenizer.special_tokens();
  const auto& ids = spm.vocab().ids;
  EXPECT_EQ(roles.pad, ids.pad);
  EXPECT_EQ(roles.unk, ids.unk);
  EXPECT_EQ(roles.cls, ids.cls);
  EXPECT_EQ(roles.sep, ids.sep);
  EXPECT_EQ(roles.mask, ids.mask);
  for (int32_t id = 0; id < spm.size(); ++id) EXPECT_EQ(tokenizer.id_to_piece(id), spm.id_to_piece(id)) << id;
  mlm::testing::expect_library_ids(tokenizer, dir, std::string("export_") + e.name);
}

INSTANTIATE_TEST_SUITE_P(
    HfTokenizerExports, HfTokenizerOnOurExports,
    ::testing::Values(Export{"unigram", config::TokenizerType::unigram, 200, false, false},
                      Export{"bpe", config::TokenizerType::bpe, 300, false, false},
                      Export{"unigram_lowercase", config::TokenizerType::unigram, 200, true, false},
                      Export{"bpe_byte_fallback", config::TokenizerType::bpe, 400, false, true},
                      Export{"unigram_lowercase_byte_fallback", config::TokenizerType::unigram, 400, true, true}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::text::hf_tokenizer_exports

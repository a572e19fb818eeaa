// The products a model-shape peak is measured at (train/tools/bench/model_gemm_shapes.h), per
// architecture: every linear layer of the step with its [m, k] x [k, n] and count, written out
// here from each model's modules.
#include "mlm/train/tools/bench/model_gemm_shapes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlm::train::bench {
namespace {

struct Want {
  std::string name;
  int64_t m, k, n, per_step;
};

void expect_shapes(const std::vector<GemmShape>& got, const std::vector<Want>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name) << "at " << i;
    EXPECT_EQ(got[i].m, want[i].m) << want[i].name;
    EXPECT_EQ(got[i].k, want[i].k) << want[i].name;
    EXPECT_EQ(got[i].n, want[i].n) << want[i].name;
    EXPECT_EQ(got[i].per_step, want[i].per_step) << want[i].name;
  }
}

// 2 x 64 = 128 tokens; mlm_probability 0.3 selects round(38.4) = 38 of them.
config::RunConfig small_run(config::Architecture architecture) {
  config::RunConfig c;
  c.model.architecture = architecture;
  c.model.hidden_size = 64;
  c.model.num_hidden_layers = 3;
  c.model.num_attention_heads = 2;
  c.model.intermediate_size = 96;
  c.train.micro_batch_size = 2;
  c.train.grad_accum_steps = 1;
  c.data.seq_len = 64;
  c.masking.mlm_probability = 0.3;
  return c;
}

TEST(ModelGemmShapes, BertLayersAndSparseHead) {
  const auto c = small_run(config::Architecture::bert);
  expect_shapes(model_gemm_shapes(c, 1024), {{"qkv", 128, 64, 192, 3},
                                             {"attention_out", 128, 64, 64, 3},
                                             {"ffn_in", 128, 64, 96, 3},
                                             {"ffn_out", 128, 96, 64, 3},
                                             {"head_transform", 38, 64, 64, 1},
                                             {"decoder", 38, 64, 1024, 1}});
}

TEST(ModelGemmShapes, ModernBertGeGluInputIsTwiceTheIntermediate) {
  const auto c = small_run(config::Architecture::modernbert);
  const auto shapes = model_gemm_shapes(c, 1024);
  ASSERT_EQ(shapes.size(), 6u);
  EXPECT_EQ(shapes[2].name, "ffn_in");
  EXPECT_EQ(shapes[2].n, 2 * 96);
  EXPECT_EQ(shapes[3].name, "ffn_out");
  EXPECT_EQ(shapes[3].k, 96);
}

TEST(ModelGemmShapes, DenseHeadAndMicroBatchesCount) {
  auto c = small_run(config::Architecture::bert);
  c.model.sparse_head = false;
  c.train.grad_accum_steps = 2;
  const auto shapes = model_gemm_shapes(c, 1024);
  ASSERT_EQ(shapes.size(), 6u);
  EXPECT_EQ(shapes[0].per_step, 6);  // 3 layers x 2 micro-batches
  EXPECT_EQ(shapes[5].name, "decoder");
  EXPECT_EQ(shapes[5].m, 128);       // every position scored
  EXPECT_EQ(shapes[5].per_step, 2);
  EXPECT_DOUBLE_EQ(shapes[5].step_flops(), 3.0 * 2.0 * 128 * 64 * 1024 * 2);
}

TEST(ModelGemmShapes, DebertaProjectsQueryKeyValueApart) {
  auto c = small_run(config::Architecture::deberta_v2);
  c.model.embedding_size = 32;
  expect_shapes(model_gemm_shapes(c, 1024), {{"embedding_projection", 128, 32, 64, 1},
                                             {"q_k_v", 128, 64, 64, 9},
                                             {"attention_out", 128, 64, 64, 3},
                                             {"ffn_in", 128, 64, 96, 3},
                                             {"ffn_out", 128, 96, 64, 3},
                                             {"head_transform", 38, 64, 32, 1},
                                             {"decoder", 38, 32, 1024, 1}});
}

// ELECTRA-small's pair at 2 layers: the generator a quarter as wide (64 of 256, one head,
// intermediate 256), both behind their projection of the 128-wide embeddings; the
// discriminator's head scores every token.
TEST(ModelGemmShapes, ElectraRtdHasTheGeneratorAndTheDiscriminator) {
  auto c = small_run(config::Architecture::electra);
  c.model.objective = config::Objective::rtd;
  c.model.hidden_size = 256;
  c.model.num_hidden_layers = 2;
  c.model.num_attention_heads = 4;
  c.model.intermediate_size = 1024;
  c.model.embedding_size = 128;
  expect_shapes(model_gemm_shapes(c, 1024), {{"generator.embedding_projection", 128, 128, 64, 1},
                                             {"generator.qkv", 128, 64, 192, 2},
                                             {"generator.attention_out", 128, 64, 64, 2},
                                             {"generator.ffn_in", 128, 64, 256, 2},
                                             {"generator.ffn_out", 128, 256, 64, 2},
                                             {"generator.head_transform", 38, 64, 128, 1},
                                             {"generator.decoder", 38, 128, 1024, 1},
                                             {"embedding_projection", 128, 128, 256, 1},
                                             {"qkv", 128, 256, 768, 2},
                                             {"attention_out", 128, 256, 256, 2},
                                             {"ffn_in", 128, 256, 1024, 2},
                                             {"ffn_out", 128, 1024, 256, 2},
                                             {"rtd_head", 128, 256, 256, 1}});
}

TEST(ModelGemmShapes, VocabularyPaddedAsTheModelsPadIt) {
  config::ModelConfig m;
  m.pad_vocab_multiple = 64;
  EXPECT_EQ(padded_vocab_rows(m, 1000), 1024);
  EXPECT_EQ(padded_vocab_rows(m, 1024), 1024);
  m.pad_vocab_multiple = 1;
  EXPECT_EQ(padded_vocab_rows(m, 30522), 30522);
  m.pad_vocab_multiple = 0;  // none
  EXPECT_EQ(padded_vocab_rows(m, 30522), 30522);
}

}  // namespace
}  // namespace mlm::train::bench

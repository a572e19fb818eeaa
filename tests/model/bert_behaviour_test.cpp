// Behaviour of BertForPreTraining beyond the reference numbers: empty selections, padded
// vocabulary, mask skipping, dense vs sparse head, bf16 autocast, initialisation.
#include <gtest/gtest.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "mlm/model/bert/bert.h"
#include "model_test_util.h"

namespace mlm::model {
namespace {
using testing::expect_tensor_near;

MlmInputs random_batch(int64_t batch, int64_t seq, int64_t vocab, int64_t masked_per_row, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  MlmInputs in;
  in.input_ids = torch::randint(5, vocab, {batch, seq}, gen, torch::kLong);
  in.token_type_ids = torch::zeros({batch, seq}, torch::kLong);
  in.attention_mask = torch::ones({batch, seq}, torch::kLong);
  in.has_padding = false;
  std::vector<int64_t> positions;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < masked_per_row; ++k) positions.push_back(b * seq + 1 + k * 2);
  in.masked_positions = torch::tensor(positions, torch::kLong);
  in.masked_labels = torch::randint(0, vocab, {static_cast<int64_t>(positions.size())}, gen, torch::kLong);
  return in;
}

BertForPreTraining tiny_model(config::NormPosition norm = config::NormPosition::post, int64_t multiple = 64) {
  auto cfg = testing::tiny_config(norm);
  cfg.pad_vocab_multiple = multiple;
  torch::manual_seed(3);
  return BertForPreTraining(cfg, testing::kTinyVocab, testing::kTinyPad);
}

TEST(Bert, NoSelectedPositionsGiveZeroLossAndZeroGradient) {
  for (bool sparse : {true, false}) {
    auto cfg = testing::tiny_config(config::NormPosition::post);
    cfg.objective = config::Objective::mlm;
    cfg.sparse_head = sparse;
    BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
    auto in = random_batch(2, 8, testing::kTinyVocab, 0, 1);
    auto out = model->forward(in);
    EXPECT_EQ(out.mlm_loss_sum.item<double>(), 0.0);
    EXPECT_EQ(out.mlm_correct.item<int64_t>(), 0);
    out.mlm_loss_sum.backward();
    for (const auto& p : model->parameters()) {
      if (!p.grad().defined()) continue;
      EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
      EXPECT_EQ(p.grad().abs().sum().item<double>(), 0.0);
    }
  }
}

TEST(Bert, PaddedVocabularyRowsAreNeverPredicted) {
  auto model = tiny_model();
  ASSERT_EQ(model->padded_vocab_size(), 128);
  auto in = random_batch(2, 10, testing::kTinyVocab, 3, 2);
  auto before = model->forward(in, true);
  {
    torch::NoGradGuard no_grad;  // make every padded row the most likely one, if it counted
    model->predictions->bias.narrow(0, testing::kTinyVocab, 128 - testing::kTinyVocab).fill_(1e4);
  }
  auto after = model->forward(in, true);
  EXPECT_EQ(after.mlm_logits.size(1), testing::kTinyVocab);
  EXPECT_TRUE(torch::equal(before.mlm_logits, after.mlm_logits));
  EXPECT_EQ(before.mlm_loss_sum.item<float>(), after.mlm_loss_sum.item<float>());
  EXPECT_LT(after.mlm_logits.argmax(1).max().item<int64_t>(), testing::kTinyVocab);
}

TEST(Bert, AllOnesMaskEqualsNoMask) {
  auto model = tiny_model();
  auto in = random_batch(3, 12, testing::kTinyVocab, 2, 3);
  auto skipped = model->forward(in, true);
  in.has_padding = true;  // mask of ones applied explicitly
  auto masked = model->forward(in, true);
  expect_tensor_near(masked.mlm_logits, skipped.mlm_logits, 1e-6, "mask of ones vs no mask");
  in.attention_mask = torch::Tensor();  // undefined mask = no mask
  expect_tensor_near(model->forward(in, true).mlm_logits, skipped.mlm_logits, 0.0, "undefined mask");
}

TEST(Bert, PaddingDoesNotChangeRealTokens) {
  // Appending padded positions must leave the logits of real tokens unchanged.
  auto model = tiny_model(config::NormPosition::pre);
  auto in = random_batch(2, 8, testing::kTinyVocab, 2, 4);
  auto base = model->forward(in, true);
  MlmInputs padded = in;
  padded.input_ids = torch::cat({in.input_ids, torch::zeros({2, 4}, torch::kLong)}, 1);
  padded.token_type_ids = torch::zeros({2, 12}, torch::kLong);
  padded.attention_mask = torch::cat({torch::ones({2, 8}, torch::kLong), torch::zeros({2, 4}, torch::kLong)}, 1);
  padded.has_padding = true;
  auto pos = in.masked_positions;
  padded.masked_positions = pos.div(8, "floor") * 12 + pos.remainder(8);
  expect_tensor_near(model->forward(padded, true).mlm_logits, base.mlm_logits, 1e-5, "padded batch");
}

// A model with the sparse head (seeded) and its dense-head twin holding the same weights.
std::pair<BertForPreTraining, BertForPreTraining> sparse_and_dense(config::ModelConfig cfg,
                                                                   uint64_t seed) {
  torch::manual_seed(seed);
  cfg.sparse_head = true;
  BertForPreTraining sparse(cfg, testing::kTinyVocab, testing::kTinyPad);
  cfg.sparse_head = false;
  BertForPreTraining dense(cfg, testing::kTinyVocab, testing::kTinyPad);
  load_hf_state_dict(dense, to_hf_state_dict(sparse), "sparse model");
  return {sparse, dense};
}

TEST(Bert, DenseAndSparseHeadAgree) {
  auto [sparse, dense] = sparse_and_dense(testing::tiny_config(config::NormPosition::post), 5);
  auto in = random_batch(2, 10, testing::kTinyVocab, 4, 6);
  expect_tensor_near(dense->forward(in, true).mlm_logits, sparse->forward(in, true).mlm_logits, 1e-5, "dense vs sparse");
}

// With the MLM objective the sparse head also runs the last layer's queries and feed-forward
// block on the selected positions only: the same logits and the same gradient for every
// parameter as the dense model, with padding and rows holding 3, 0 and 1 selected positions.
TEST(Bert, SparseLastLayerMatchesTheDenseModel) {
  for (auto norm : {config::NormPosition::post, config::NormPosition::pre}) {
    SCOPED_TRACE(norm == config::NormPosition::post ? "post-LN" : "pre-LN");
    auto cfg = testing::tiny_config(norm);
    cfg.objective = config::Objective::mlm;
    auto [sparse, dense] = sparse_and_dense(cfg, 7);

    auto in = random_batch(3, 10, testing::kTinyVocab, 0, 8);
    in.attention_mask.narrow(1, 8, 2).select(0, 2).zero_();  // row 2: two padded positions
    in.has_padding = true;
    in.masked_positions = torch::tensor({1, 4, 9, 21, 27}, torch::kLong);
    in.masked_labels = torch::tensor({5, 17, 40, 3, 96}, torch::kLong);

    sparse->train();
    dense->train();
    testing::expect_sparse_matches_dense(sparse, dense, in);
  }
}

// CPU bf16 autocast on/off, as the trainer's AutocastScope sets it.
void set_cpu_bf16_autocast(bool on) {
  at::autocast::set_autocast_enabled(at::kCPU, on);
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  if (!on) at::autocast::clear_cache();
}

TEST(Bert, Bf16AutocastForwardBackwardIsFinite) {
  for (auto norm : {config::NormPosition::post, config::NormPosition::pre}) {
    auto model = tiny_model(norm);
    auto in = random_batch(2, 12, testing::kTinyVocab, 3, 7);
    in.attention_mask.narrow(1, 9, 3).zero_();
    in.has_padding = true;
    in.nsp_labels = torch::tensor({0, 1}, torch::kLong);
    set_cpu_bf16_autocast(true);
    MlmOutput out;
    try {
      out = model->forward(in, true);
    } catch (...) {
      set_cpu_bf16_autocast(false);
      throw;
    }
    set_cpu_bf16_autocast(false);
    EXPECT_EQ(out.mlm_loss_sum.scalar_type(), torch::kFloat32);
    auto loss = out.mlm_loss_sum / 6.0;
    if (out.nsp_loss_sum.defined()) loss = loss + out.nsp_loss_sum / 2.0;
    ASSERT_TRUE(std::isfinite(loss.item<float>()));
    loss.backward();
    for (const auto& item : model->named_parameters()) {
      const auto& name = item.key();
      const auto& p = item.value();
      if (p.grad().defined()) EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>()) << name;
      EXPECT_EQ(p.scalar_type(), torch::kFloat32) << name;
    }
    // bf16 logits stay close to fp32 ones (bf16 has 8 bits of mantissa).
    auto fp32 = model->forward(in, true).mlm_logits;
    const float diff = (out.mlm_logits - fp32).abs().max().item<float>();
    EXPECT_LT(diff, 0.1);
    EXPECT_GT(diff, 0.0f);  // autocast really ran the products in bf16
  }
}

TEST(Bert, InitialisationFollowsBert) {
  auto cfg = testing::tiny_config(config::NormPosition::post);
  cfg.hidden_size = 64;
  cfg.initializer_range = 0.02;
  torch::manual_seed(11);
  BertForPreTraining model(cfg, 1000, 3);
  for (const auto& item : model->named_parameters()) {
      const auto& name = item.key();
      const auto& p = item.value();
    if (name.find("LayerNorm") != std::string::npos || name.find("final_layer_norm") != std::string::npos) {
      const double want = name.size() >= 6 && name.substr(name.size() - 6) == "weight" ? 1.0 : 0.0;
      EXPECT_TRUE(torch::all(p == want).item<bool>()) << name;
    } else if (p.dim() == 1) {
      EXPECT_EQ(p.abs().sum().item<double>(), 0.0) << name;  // biases
    } else {
      // normal(0, 0.02): sample std within 4 sigma of its sampling error sqrt(1/(2n)).
      auto w = name.find("word_embeddings") != std::string::npos ? p.narrow(0, 4, 990) : p;
      const double n = static_cast<double>(w.numel());
      EXPECT_NEAR(w.std().item<double>(), 0.02, 4 * 0.02 / std::sqrt(2 * n)) << name;
    }
  }
  auto words = model->word_embeddings();
  EXPECT_EQ(words[3].abs().sum().item<double>(), 0.0);  // [PAD]
  EXPECT_EQ(words.narrow(0, 1000, model->padded_vocab_size() - 1000).abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace mlm::model

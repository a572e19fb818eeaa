// Parity with `transformers`' own DebertaV2ForMaskedLM (the venv's, run live through
// tests/reference/hf_client.py deberta_reference): the C++ model writes its config.json (the
// export's), its weights and a batch; transformers computes the logits of the selected
// positions, the loss and every gradient; fp32 must agree (logits 1e-5, gradients 1e-4), with
// padding, log-bucketed and clamped relative positions, shared and separate position
// projections, c2p and p2c alone or together, the embedding projection and token types.
#include <gtest/gtest.h>

#include <iostream>

#include "config/config_test_util.h"
#include "mlm/model/make_masked_lm.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other reference tests.
namespace mlm::model::deberta_reference {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3, kSeq = 40;

struct Case {
  const char* name;
  bool padded;                   // rows 1 and 2 end in padding
  bool v3;                       // DeBERTa-v3's options: buckets, shared keys, p2c|c2p, rel norm,
                                 //   no absolute positions, no token types
  int64_t embedding_size;        // 0 = hidden_size
  std::vector<std::string> pos_att_type;
  bool relative_attention = true;
};

config::ModelConfig tiny_deberta(const Case& c) {
  config::ModelConfig m;
  m.architecture = config::Architecture::deberta_v2;
  m.hidden_size = 32;
  m.num_attention_heads = 4;
  m.intermediate_size = 48;
  m.num_hidden_layers = 3;
  m.max_position_embeddings = 64;
  m.layer_norm_eps = 1e-7;
  m.attention_probs_dropout_prob = 0.0;
  m.hidden_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;  // padded rows must stay out of everything
  m.embedding_size = c.embedding_size;
  m.pos_att_type = c.pos_att_type;
  m.relative_attention = c.relative_attention;
  if (c.v3) {
    m.position_buckets = 16;         // exact within 8, log-spaced beyond
    m.max_relative_positions = 24;   // shorter than the 40 positions: the far buckets clamp
    m.share_att_key = true;
    m.norm_rel_ebd = "layer_norm";
    m.position_biased_input = false;
    m.type_vocab_size = 0;
  } else {
    m.position_buckets = -1;         // exact distances, clamped at 12
    m.max_relative_positions = 12;
    m.share_att_key = false;
    m.norm_rel_ebd = "none";
    m.position_biased_input = true;
    m.type_vocab_size = 2;
    m.hidden_act = config::Activation::gelu_tanh;
  }
  return m;
}

// Weights far from their initial 1 / 0 / small values, so a wrong wiring shows.
void randomise(MaskedLmImpl& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.copy_(torch::randn_like(p) * 0.5);
}

class DebertaReference : public ::testing::TestWithParam<Case> {};

TEST_P(DebertaReference, MatchesTransformers) {
  const Case c = GetParam();
  config::testing::TempDir dir;
  torch::manual_seed(11);
  auto model = make_masked_lm(tiny_deberta(c), kVocab, kPad);
  randomise(*model);
  model->train();  // dropouts are 0: training mode must be exact

  auto input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong);
  auto attention_mask = torch::ones({kBatch, kSeq}, torch::kLong);
  if (c.padded) {
    attention_mask[1].narrow(0, 30, 10).zero_();
    attention_mask[2].narrow(0, 13, 27).zero_();
    input_ids.masked_fill_(attention_mask.eq(0), kPad);
  }
  auto token_types = torch::zeros({kBatch, kSeq}, torch::kLong);
  token_types.narrow(1, 17, kSeq - 17).fill_(1);
  token_types.masked_fill_(attention_mask.eq(0), 0);
  const auto selected = (torch::rand({kBatch, kSeq}) < 0.3).logical_and(attention_mask.eq(1));
  const auto labels = torch::where(selected, torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong),
                                   torch::full({kBatch, kSeq}, -100, torch::kLong));
  const bool types = model->config().type_vocab_size > 0;
  TensorDict batch = {{"input_ids", input_ids}, {"attention_mask", attention_mask}, {"labels", labels}};
  if (types) batch.emplace_back("token_type_ids", token_types);
  auto ref = testing::run_hf_reference(model, batch, "deberta_reference", dir.path());
  ASSERT_FALSE(ref.empty());

  MlmInputs in;
  in.input_ids = input_ids;
  in.attention_mask = attention_mask;
  in.has_padding = c.padded;
  if (types) in.token_type_ids = token_types;
  in.masked_positions = labels.reshape(-1).ne(-100).nonzero().reshape(-1);
  in.masked_labels = labels.reshape(-1).index_select(0, in.masked_positions);
  ASSERT_GT(in.masked_positions.numel(), 10);

  auto out = model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["logits"], 1e-5, "logits");
  expect_tensor_near(out.mlm_loss_sum, ref["loss_sum"], 1e-4, "loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["correct"].item<int64_t>());
  (out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel())).backward();
  const int checked = testing::expect_reference_gradients(model, ref, 1e-4);
  // The largest absolute differences seen (for the record; the checks are above).
  double worst_gradient = 0;
  for (auto& [key, grad] : model->hf_gradients()) {
    const auto it = ref.find("grad." + key);
    if (it == ref.end() || !grad.defined()) continue;
    worst_gradient = std::max(worst_gradient, (grad.cpu() - it->second).abs().max().item<double>());
  }
  std::cout << c.name << ": max |logits diff| " << (out.mlm_logits.detach() - ref["logits"]).abs().max().item<double>()
            << ", max |gradient diff| " << worst_gradient << "\n";
  EXPECT_EQ(checked, static_cast<int>(model->parameters().size()));
  const int64_t padded = model->padded_vocab_size();
  EXPECT_EQ(model->word_embeddings().grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DebertaReference,
    ::testing::Values(Case{"v3_padded", true, true, 0, {"p2c", "c2p"}},
                      Case{"v3_nopad_embedding_projection", false, true, 24, {"p2c", "c2p"}},
                      Case{"v2_separate_keys_c2p_types_padded", true, false, 0, {"c2p"}},
                      Case{"v2_p2c_projection_types", false, false, 16, {"p2c"}},
                      Case{"absolute_only_padded", true, false, 0, {"p2c", "c2p"}, false}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::model::deberta_reference

// Parity with `transformers`' own Electra modules (the venv's, run live through
// tests/reference/hf_client.py electra_reference): the C++ pair writes its export (generator/ as
// ElectraForMaskedLM, discriminator/ as ElectraForPreTraining), a padded batch and a fixed
// replacement of the masked positions; transformers, with the two models sharing their
// embeddings as ELECTRA does, computes the generator's logits and loss, the discriminator's
// logits and loss, and every gradient of the joint loss mlm / M + lambda * rtd / tokens. fp32
// must agree: logits 1e-5, gradients 1e-4 of each tensor's largest magnitude (lambda = 50
// scales the RTD gradients to tens, where 1e-4 absolute would ask for fp32's last bits).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/electra/electra_hf.h"
#include "mlm/model/hf/safetensors.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::electra_reference {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3, kSeq = 20;
constexpr double kLambda = 50.0;

struct Case {
  const char* name;
  bool padded;
  bool sparse_head;
  bool projected;  // embedding_size < hidden_size (ELECTRA-small's projection)
};

config::ModelConfig tiny_pair(const Case& c) {
  config::ModelConfig m;
  m.architecture = config::Architecture::electra;
  m.objective = config::Objective::rtd;
  m.hidden_size = 64;
  m.num_hidden_layers = 2;
  m.num_attention_heads = 2;
  m.intermediate_size = 96;
  m.embedding_size = c.projected ? 32 : 64;
  m.generator_hidden_ratio = 0.5;  // 32 wide: one head, intermediate 128
  m.max_position_embeddings = 32;
  m.hidden_dropout_prob = 0.0;
  m.attention_probs_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;  // padded rows must stay out of everything
  m.sparse_head = c.sparse_head;
  m.rtd_weight = kLambda;
  return m;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

class ElectraReference : public ::testing::TestWithParam<Case> {};

TEST_P(ElectraReference, MatchesTransformers) {
  const Case c = GetParam();
  config::testing::TempDir dir;
  torch::manual_seed(11);
  ElectraForPreTraining model(tiny_pair(c), kVocab, kPad);
  {
    // Weights far from their initial values, so that a wrong wiring shows.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.5);
    model->word_embeddings().narrow(0, kVocab, model->padded_vocab_size() - kVocab).zero_();
  }
  model->train();  // dropouts are 0: training mode must be exact

  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong);
  in.attention_mask = torch::ones({kBatch, kSeq}, torch::kLong);
  if (c.padded) {
    in.attention_mask[1].narrow(0, 14, 6).zero_();
    in.attention_mask[2].narrow(0, 7, 13).zero_();
    in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  }
  in.has_padding = c.padded;
  in.token_type_ids = torch::zeros_like(in.input_ids);
  in.token_type_ids[0].narrow(0, 10, 10).fill_(1);
  const auto selected = (torch::rand({kBatch, kSeq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong);
  // A fixed replacement: about half the samples are the original token (labelled original).
  in.rtd_samples = torch::where(torch::rand({in.masked_positions.numel()}) < 0.5, in.masked_labels,
                                torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong));
  ASSERT_GE(in.masked_positions.numel(), 6);

  write_electra_pair(*model, dir.path().string(), WeightFormat::safetensors);
  write_safetensors((dir.path() / "batch.safetensors").string(),
                    {{"input_ids", in.input_ids},
                     {"attention_mask", in.attention_mask},
                     {"token_type_ids", in.token_type_ids},
                     {"masked_positions", in.masked_positions},
                     {"masked_labels", in.masked_labels},
                     {"samples", in.rtd_samples}});
  const std::string command = quote(MLM_PYTHON) + " " +
                              quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") +
                              " electra_reference " + quote(dir.path().string()) + " " + std::to_string(kLambda) +
                              " > " + quote((dir.path() / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir.path() / "py.out").rdbuf();
  std::map<std::string, torch::Tensor> ref;
  for (auto& [k, v] : read_safetensors((dir.path() / "reference.safetensors").string())) ref[k] = v;

  auto out = model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["mlm_logits"], 1e-5, "mlm_logits");
  expect_tensor_near(out.mlm_loss_sum, ref["mlm_loss_sum"], 1e-4, "mlm_loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["mlm_correct"].item<int64_t>());
  // transformers also scores the padding, which nothing reads; ours is 0 there.
  const auto padding = in.has_padding ? in.attention_mask.eq(0) : torch::zeros_like(in.input_ids).to(torch::kBool);
  expect_tensor_near(out.rtd_logits, ref["rtd_logits"].masked_fill(padding, 0.0f), 1e-5, "rtd_logits");
  expect_tensor_near(out.rtd_loss_sum, ref["rtd_loss_sum"], 1e-4, "rtd_loss_sum");
  EXPECT_EQ(out.rtd_replaced.item<int64_t>(), ref["replaced"].sum().item<int64_t>());

  const double tokens = in.attention_mask.sum().item<double>();
  const double masked = static_cast<double>(in.masked_labels.numel());
  (out.mlm_loss_sum / masked + out.rtd_loss_sum * (kLambda / tokens)).backward();
  std::map<std::string, torch::Tensor> grads;
  for (auto& [key, grad] : model->hf_gradients()) grads[key] = grad;
  int checked = 0;
  for (const auto& [key, want] : ref) {
    if (key.rfind("generator.", 0) != 0 && key.rfind("discriminator.", 0) != 0) continue;
    ASSERT_TRUE(grads.count(key) && grads[key].defined()) << key;
    const double scale = std::max(1.0, want.abs().max().item<double>());
    expect_tensor_near(grads[key], want, 1e-4 * scale, "grad " + key);
    ++checked;
  }
  // Every gradient of the pair but the tied decoder (the word embeddings' own).
  EXPECT_EQ(checked, static_cast<int>(grads.size()) - 1);
  const int64_t padded = model->padded_vocab_size();
  EXPECT_EQ(model->word_embeddings().grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Cases, ElectraReference,
                         ::testing::Values(Case{"nopad_dense", false, false, true},
                                           Case{"pad_sparse_projected", true, true, true},
                                           Case{"pad_dense_unprojected", true, false, false}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::model::electra_reference

// Parity of DeBERTa-v3's objective (deberta_v2 with objective rtd) with `transformers`' own
// DebertaV2 modules (the venv's, run live through tests/reference/hf_client.py
// deberta_rtd_reference): the C++ pair writes its export (generator/ as DebertaV2ForMaskedLM,
// discriminator/ as the hub's deberta-v3 checkpoints: deberta.* and mask_predictions.*), a
// batch and a fixed replacement of the masked positions; transformers' DebertaV2ForMaskedLM and
// DebertaV2Model (loaded by AutoModel with nothing missing) plus the RTD head, the tables shared
// (shared) or the token vectors detached plus a delta (gdes), compute the logits, the losses
// and every gradient of mlm / M + lambda * rtd / tokens. fp32 must agree: logits 1e-5,
// gradients 1e-4 of each tensor's largest magnitude (as the ELECTRA pair's test asks).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "config/config_test_util.h"
#include "mlm/model/deberta/deberta_rtd.h"
#include "mlm/model/hf/safetensors.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::deberta_rtd_reference {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3, kSeq = 40;
constexpr double kLambda = 50.0;

struct Case {
  const char* name;
  bool padded;
  bool gdes;
  bool v3;                     // DeBERTa-v3's options (no absolute positions, no token types)
  int64_t embedding_size = 0;  // 0 = hidden_size
  double generator_hidden_ratio = 0;  // 0 = DeBERTa's: as wide, half as deep
};

config::ModelConfig tiny_deberta_pair(const Case& c) {
  config::ModelConfig m;
  m.architecture = config::Architecture::deberta_v2;
  m.objective = config::Objective::rtd;
  m.embedding_sharing = c.gdes ? config::EmbeddingSharing::gdes : config::EmbeddingSharing::shared;
  m.hidden_size = 32;
  m.num_attention_heads = 4;
  m.intermediate_size = 48;
  m.num_hidden_layers = 2;  // the generator: 1
  m.generator_hidden_ratio = c.generator_hidden_ratio;
  m.embedding_size = c.embedding_size;
  m.max_position_embeddings = 64;
  m.layer_norm_eps = 1e-7;
  m.attention_probs_dropout_prob = 0.0;
  m.hidden_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;  // padded rows must stay out of everything
  m.rtd_weight = kLambda;
  m.pos_att_type = {"p2c", "c2p"};
  m.share_att_key = true;
  m.position_buckets = 16;
  m.max_relative_positions = 24;
  m.norm_rel_ebd = "layer_norm";
  m.position_biased_input = !c.v3;
  m.type_vocab_size = c.v3 ? 0 : 2;
  return m;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

class DebertaRtdReference : public ::testing::TestWithParam<Case> {};

TEST_P(DebertaRtdReference, MatchesTransformers) {
  const Case c = GetParam();
  config::testing::TempDir dir;
  torch::manual_seed(11);
  DebertaV2ForPreTraining model(tiny_deberta_pair(c), kVocab, kPad);
  {
    // Weights far from their initial values (the gdes delta too), so that a wrong wiring shows.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.5);
    model->word_embeddings().narrow(0, kVocab, model->padded_vocab_size() - kVocab).zero_();
  }
  model->train();  // dropouts are 0: training mode must be exact

  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong);
  in.attention_mask = torch::ones({kBatch, kSeq}, torch::kLong);
  if (c.padded) {
    in.attention_mask[1].narrow(0, 30, 10).zero_();
    in.attention_mask[2].narrow(0, 13, 27).zero_();
    in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  }
  in.has_padding = c.padded;
  if (!c.v3) {
    in.token_type_ids = torch::zeros_like(in.input_ids);
    in.token_type_ids[0].narrow(0, 17, kSeq - 17).fill_(1);
  }
  const auto selected = (torch::rand({kBatch, kSeq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong);
  // A fixed replacement: about half the samples are the original token (labelled original).
  in.rtd_samples = torch::where(torch::rand({in.masked_positions.numel()}) < 0.5, in.masked_labels,
                                torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong));
  ASSERT_GE(in.masked_positions.numel(), 10);

  write_deberta_pair(*model, dir.path().string(), WeightFormat::safetensors);
  TensorDict batch = {{"input_ids", in.input_ids},
                      {"attention_mask", in.attention_mask},
                      {"masked_positions", in.masked_positions},
                      {"masked_labels", in.masked_labels},
                      {"samples", in.rtd_samples}};
  if (in.token_type_ids.defined()) batch.emplace_back("token_type_ids", in.token_type_ids);
  write_safetensors((dir.path() / "batch.safetensors").string(), batch);
  const std::string command = quoted(MLM_PYTHON) + " " +
                              quoted(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") +
                              " deberta_rtd_reference " + quoted(dir.path().string()) + " " +
                              std::to_string(kLambda) + (c.gdes ? " gdes" : " shared") + " > " +
                              quoted((dir.path() / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir.path() / "py.out").rdbuf();
  std::map<std::string, torch::Tensor> ref;
  for (auto& [k, v] : read_safetensors((dir.path() / "reference.safetensors").string())) ref[k] = v;

  auto out = model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["mlm_logits"], 1e-5, "mlm_logits");
  expect_tensor_near(out.mlm_loss_sum, ref["mlm_loss_sum"], 1e-4, "mlm_loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["mlm_correct"].item<int64_t>());
  // transformers also scores the padding, which nothing reads; ours is 0 there.
  const auto padding = in.has_padding ? in.attention_mask.eq(0) : torch::zeros_like(in.input_ids).to(torch::kBool);
  const auto want_rtd = ref["rtd_logits"].masked_fill(padding, 0.0f);
  expect_tensor_near(out.rtd_logits, want_rtd, 1e-5, "rtd_logits");
  expect_tensor_near(out.rtd_loss_sum, ref["rtd_loss_sum"], 1e-4, "rtd_loss_sum");
  EXPECT_EQ(out.rtd_replaced.item<int64_t>(), ref["replaced"].sum().item<int64_t>());

  const double tokens = in.attention_mask.sum().item<double>();
  const double masked = static_cast<double>(in.masked_labels.numel());
  (out.mlm_loss_sum / masked + out.rtd_loss_sum * (kLambda / tokens)).backward();
  std::map<std::string, torch::Tensor> grads;
  for (auto& [key, grad] : model->hf_gradients()) grads[key] = grad;
  int checked = 0;
  double worst_relative = 0;
  for (const auto& [key, want] : ref) {
    if (key.rfind("generator.", 0) != 0 && key.rfind("discriminator.", 0) != 0) continue;
    ASSERT_TRUE(grads.count(key) && grads[key].defined()) << key;
    const double scale = std::max(1.0, want.abs().max().item<double>());
    expect_tensor_near(grads[key], want, 1e-4 * scale, "grad " + key);
    worst_relative = std::max(worst_relative, (grads[key].cpu() - want).abs().max().item<double>() / scale);
    ++checked;
  }
  // Every gradient of the pair but the tied decoder's two copies (the word embeddings' and the
  // bias's own).
  EXPECT_EQ(checked, static_cast<int>(grads.size()) - 2);
  const int64_t padded = model->padded_vocab_size();
  EXPECT_EQ(model->word_embeddings().grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
  // The largest differences seen (for the record; the checks are above).
  std::cout << c.name << ": max |mlm logits diff| "
            << (out.mlm_logits.detach() - ref["mlm_logits"]).abs().max().item<double>() << ", max |rtd logits diff| "
            << (out.rtd_logits - want_rtd).abs().max().item<double>()
            << ", max gradient diff / the tensor's largest magnitude " << worst_relative << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, DebertaRtdReference,
                         ::testing::Values(Case{"v3_gdes_padded", true, true, true},
                                           Case{"v3_shared_padded", true, false, true},
                                           Case{"v3_gdes_nopad", false, true, true},
                                           Case{"v2_shared_types_projected_narrow_generator", true, false, false, 24, 0.5},
                                           Case{"v2_gdes_types_projected", true, true, false, 24}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::model::deberta_rtd_reference

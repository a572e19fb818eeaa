// Parity of the replaced-token-detection pair (rtd/rtd_pair.h) with `transformers`' own modules
// (the venv's, run live through tests/reference/hf_client.py), for every architecture's pair:
// the C++ pair writes its export (generator/ as the masked LM, discriminator/ as the
// architecture's discriminator: ELECTRA's ElectraForPreTraining, DeBERTa-v3's deberta.* and
// mask_predictions.*), a batch and a fixed replacement of the masked positions; transformers,
// the two networks sharing their tables (shared) or the token vectors detached plus a delta
// (gdes), computes the generator's logits and loss, the discriminator's logits and loss, and
// every gradient of the joint loss mlm / M + lambda * rtd / tokens. fp32 must agree: logits
// 1e-5, gradients 1e-4 of each tensor's largest magnitude (lambda = 50 scales the RTD gradients
// to tens, where 1e-4 absolute would ask for fp32's last bits).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "config/config_test_util.h"
#include "mlm/model/architectures.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/rtd/rtd_directory.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::rtd_reference {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3;
constexpr double kLambda = 50.0;

struct Case {
  const char* name;
  config::Architecture architecture;
  bool padded;
  bool gdes;
  bool sparse_head = false;
  bool v3 = false;                    // DeBERTa-v3's options (no absolute positions, no token types)
  int64_t embedding_size = 0;         // 0 = hidden_size
  double generator_hidden_ratio = 0;  // 0 = the architecture's default
};

// What differs between the two architectures' tiny pairs and their references.
struct Batch {
  int64_t seq, min_masked;
  int64_t row1_padding_from, row2_padding_from;  // where rows 1 and 2 are padded to the end
  int64_t second_type_from;                      // row 0's token type 1 from here
  std::string reference;                         // hf_client.py's command and its arguments
};

config::ModelConfig tiny_pair(const Case& c) {
  config::ModelConfig m;
  m.architecture = c.architecture;
  m.objective = config::Objective::rtd;
  m.embedding_sharing = c.gdes ? config::EmbeddingSharing::gdes : config::EmbeddingSharing::shared;
  m.embedding_size = c.embedding_size;
  m.generator_hidden_ratio = c.generator_hidden_ratio;
  m.hidden_dropout_prob = 0.0;
  m.attention_probs_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;  // padded rows must stay out of everything
  m.sparse_head = c.sparse_head;
  m.rtd_weight = kLambda;
  if (c.architecture == config::Architecture::electra) {
    m.hidden_size = 64;  // the generator 32 wide (ratio 0.5): one head, intermediate 128
    m.num_hidden_layers = 2;
    m.num_attention_heads = 2;
    m.intermediate_size = 96;
    m.max_position_embeddings = 32;
  } else {
    m.hidden_size = 32;
    m.num_attention_heads = 4;
    m.intermediate_size = 48;
    m.num_hidden_layers = 2;  // the generator: 1
    m.max_position_embeddings = 64;
    m.layer_norm_eps = 1e-7;
    m.pos_att_type = {"p2c", "c2p"};
    m.share_att_key = true;
    m.position_buckets = 16;
    m.max_relative_positions = 24;
    m.norm_rel_ebd = "layer_norm";
    m.position_biased_input = !c.v3;
    m.type_vocab_size = c.v3 ? 0 : 2;
  }
  return m;
}

Batch batch_of(const Case& c) {
  if (c.architecture == config::Architecture::electra) return {20, 6, 14, 7, 10, "electra_reference"};
  return {40, 10, 30, 13, c.v3 ? -1 : 17, "deberta_rtd_reference"};
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

class RtdReference : public ::testing::TestWithParam<Case> {};

TEST_P(RtdReference, MatchesTransformers) {
  const Case c = GetParam();
  const Batch shape = batch_of(c);
  config::testing::TempDir dir;
  torch::manual_seed(11);
  MaskedLm built = architecture_spec(c.architecture).build(tiny_pair(c), kVocab, kPad);
  ASSERT_NE(built->rtd_pair(), nullptr);
  RtdPairImpl& model = *built->rtd_pair();
  {
    // Weights far from their initial values (the gdes delta too), so that a wrong wiring shows.
    torch::NoGradGuard no_grad;
    for (auto& p : model.parameters()) p.copy_(torch::randn_like(p) * 0.5);
    model.word_embeddings().narrow(0, kVocab, model.padded_vocab_size() - kVocab).zero_();
  }
  model.train();  // dropouts are 0: training mode must be exact

  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {kBatch, shape.seq}, torch::kLong);
  in.attention_mask = torch::ones({kBatch, shape.seq}, torch::kLong);
  if (c.padded) {
    in.attention_mask[1].narrow(0, shape.row1_padding_from, shape.seq - shape.row1_padding_from).zero_();
    in.attention_mask[2].narrow(0, shape.row2_padding_from, shape.seq - shape.row2_padding_from).zero_();
    in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  }
  in.has_padding = c.padded;
  if (shape.second_type_from >= 0) {
    in.token_type_ids = torch::zeros_like(in.input_ids);
    in.token_type_ids[0].narrow(0, shape.second_type_from, shape.seq - shape.second_type_from).fill_(1);
  }
  const auto selected = (torch::rand({kBatch, shape.seq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong);
  // A fixed replacement: about half the samples are the original token (labelled original).
  in.rtd_samples = torch::where(torch::rand({in.masked_positions.numel()}) < 0.5, in.masked_labels,
                                torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong));
  ASSERT_GE(in.masked_positions.numel(), shape.min_masked);

  write_rtd_pair(model, dir.path().string(), WeightFormat::safetensors);
  TensorDict batch = {{"input_ids", in.input_ids},
                      {"attention_mask", in.attention_mask},
                      {"masked_positions", in.masked_positions},
                      {"masked_labels", in.masked_labels},
                      {"samples", in.rtd_samples}};
  if (in.token_type_ids.defined()) batch.emplace_back("token_type_ids", in.token_type_ids);
  write_safetensors((dir.path() / "batch.safetensors").string(), batch);
  // ELECTRA's reference shares one embeddings module; DeBERTa's is told the sharing.
  const std::string sharing =
      c.architecture == config::Architecture::electra ? "" : (c.gdes ? " gdes" : " shared");
  const std::string command = quoted(MLM_PYTHON) + " " +
                              quoted(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") + " " +
                              shape.reference + " " + quoted(dir.path().string()) + " " + std::to_string(kLambda) +
                              sharing + " > " + quoted((dir.path() / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir.path() / "py.out").rdbuf();
  std::map<std::string, torch::Tensor> ref;
  for (auto& [k, v] : read_safetensors((dir.path() / "reference.safetensors").string())) ref[k] = v;

  auto out = model.forward(in, /*return_logits=*/true);
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
  int tied_copies = 0;  // the tied decoder's keys: the word embeddings' (and bias's) own gradients
  for (auto& [key, grad] : model.hf_gradients()) {
    grads[key] = grad;
    if (key.rfind("generator.", 0) == 0 && model.generator->is_tied_decoder_key(key.substr(10))) ++tied_copies;
  }
  EXPECT_GE(tied_copies, 1);
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
  // Every gradient of the pair but the tied decoder's copies.
  EXPECT_EQ(checked, static_cast<int>(grads.size()) - tied_copies);
  const int64_t padded = model.padded_vocab_size();
  EXPECT_EQ(model.word_embeddings().grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
  // The largest differences seen (for the record; the checks are above).
  std::cout << c.name << ": max |mlm logits diff| "
            << (out.mlm_logits.detach() - ref["mlm_logits"]).abs().max().item<double>() << ", max |rtd logits diff| "
            << (out.rtd_logits - want_rtd).abs().max().item<double>()
            << ", max gradient diff / the tensor's largest magnitude " << worst_relative << "\n";
}

constexpr auto kElectra = config::Architecture::electra;
constexpr auto kDeberta = config::Architecture::deberta_v2;

INSTANTIATE_TEST_SUITE_P(
    Pairs, RtdReference,
    ::testing::Values(
        // ELECTRA: ElectraForMaskedLM + ElectraForPreTraining sharing one embeddings module.
        Case{"electra_nopad_dense", kElectra, false, false, false, false, 32, 0.5},
        Case{"electra_pad_sparse_projected", kElectra, true, false, true, false, 32, 0.5},
        Case{"electra_pad_dense_unprojected", kElectra, true, false, false, false, 64, 0.5},
        // DeBERTa-v3: DebertaV2ForMaskedLM + DebertaV2Model with the RTD head.
        Case{"deberta_v3_gdes_padded", kDeberta, true, true, false, true},
        Case{"deberta_v3_shared_padded", kDeberta, true, false, false, true},
        Case{"deberta_v3_gdes_nopad", kDeberta, false, true, false, true},
        Case{"deberta_v2_shared_types_projected_narrow_generator", kDeberta, true, false, false, false, 24, 0.5},
        Case{"deberta_v2_gdes_types_projected", kDeberta, true, true, false, false, 24}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::model::rtd_reference

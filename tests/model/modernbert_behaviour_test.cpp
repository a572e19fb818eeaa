// ModernBERT's pieces on their own: the block-by-block sliding window equals the masked full
// attention (window, sequence ends, documents, padding), the initialisation has the
// reference's spread and cut-off, and the modern keys change what they name.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "mlm/model/make_masked_lm.h"
#include "mlm/model/modernbert/local_attention.h"
#include "mlm/model/modernbert/modernbert.h"
#include "model_test_util.h"

namespace mlm::model::modernbert_behaviour {
using testing::expect_tensor_near;

// The full path: SDPA over all S keys under the [B,1,S,S] window-and-ids bias.
torch::Tensor full_window_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                    int64_t half, const torch::Tensor& ids) {
  auto allowed = sliding_window_mask(q.size(2), half, q.device());
  if (ids.defined()) allowed = allowed & same_document_mask(ids, torch::Tensor());
  return at::scaled_dot_product_attention(q, k, v, attention_bias_from_allowed(allowed, torch::kFloat32));
}

struct WindowCase {
  int64_t seq, half;
  bool ids;
};

class BandedWindowAttention : public ::testing::TestWithParam<WindowCase> {};

TEST_P(BandedWindowAttention, EqualsTheMaskedFullProduct) {
  const auto c = GetParam();
  torch::manual_seed(3);
  const int64_t batch = 2, heads = 3, dim = 8;
  const auto q = torch::randn({batch, heads, c.seq, dim}, torch::requires_grad());
  const auto k = torch::randn({batch, heads, c.seq, dim}, torch::requires_grad());
  const auto v = torch::randn({batch, heads, c.seq, dim}, torch::requires_grad());
  torch::Tensor ids;
  if (c.ids) {  // three documents in row 0, padding (-1) at the end of row 1
    ids = torch::zeros({batch, c.seq}, torch::kLong);
    ids[0].narrow(0, c.seq / 3, c.seq - c.seq / 3).fill_(1);
    ids[0].narrow(0, c.seq / 2, c.seq - c.seq / 2).fill_(2);
    ids[1].narrow(0, c.seq - 7, 7).fill_(-1);
  }
  ASSERT_TRUE(banded_window_pays(c.seq, c.half));
  const auto window = banded_window(batch, c.seq, c.half, ids, torch::kCPU, torch::kFloat32);
  const auto banded = banded_attention(q, k, v, window, 0.0);
  const auto full = full_window_attention(q, k, v, c.half, ids);
  expect_tensor_near(banded, full, 1e-6, "output");
  // The same gradients flow back: the blocks' padding and overlaps add up.
  const auto weights = torch::randn_like(full);
  const auto grads_banded = torch::autograd::grad({(banded * weights).sum()}, {q, k, v});
  const auto grads_full = torch::autograd::grad({(full * weights).sum()}, {q, k, v});
  for (size_t i = 0; i < 3; ++i) expect_tensor_near(grads_banded[i], grads_full[i], 1e-5, "grad " + std::to_string(i));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BandedWindowAttention,
                         ::testing::Values(WindowCase{64, 8, false},    // whole blocks
                                           WindowCase{37, 4, false},    // a partial last block
                                           WindowCase{37, 4, true},     // documents and padding
                                           WindowCase{129, 16, true}),  // window boundary at an edge
                         [](const auto& info) {
                           return "seq" + std::to_string(info.param.seq) + "_half" + std::to_string(info.param.half) +
                                  (info.param.ids ? "_ids" : "");
                         });

config::ModelConfig small_modernbert() {
  config::ModelConfig c;
  c.architecture = config::Architecture::modernbert;
  c.hidden_size = 64;
  c.num_attention_heads = 4;
  c.intermediate_size = 96;
  c.num_hidden_layers = 8;
  c.layer_norm_eps = 1e-5;
  c.attention_probs_dropout_prob = 0.0;
  return c;
}

TEST(ModernBertInit, TruncatedNormalWithTheReferenceSpreads) {
  torch::manual_seed(11);
  const auto c = small_modernbert();
  auto model = make_masked_lm(c, 1000, 0);
  const double in_std = c.initializer_range, out_std = c.initializer_range / std::sqrt(2.0 * c.num_hidden_layers);
  // A normal truncated at +-2 std has std 0.8796 of the untruncated one.
  constexpr double kTruncatedStd = 0.87962566;
  for (const auto& [name, tensor] : model->hf_state_dict()) {
    SCOPED_TRACE(name);
    if (name.find("norm") != std::string::npos) {
      EXPECT_TRUE(torch::all(tensor.eq(1)).item<bool>());  // weights only: no norm biases
      continue;
    }
    if (name == "decoder.bias") {
      EXPECT_EQ(tensor.abs().sum().item<double>(), 0.0);
      continue;
    }
    const bool out = name.find(".Wo.") != std::string::npos || name == "head.dense.weight";
    const double std = out ? out_std : in_std;
    EXPECT_LE(tensor.abs().max().item<double>(), 2 * std + 1e-9);
    EXPECT_NEAR(tensor.std().item<double>(), kTruncatedStd * std, 0.06 * std);  // >= 4096 draws each
  }
  // Unlike BERT's, the [PAD] row is drawn too (transformers leaves it); padded rows are zero.
  EXPECT_GT(model->word_embeddings()[0].abs().sum().item<double>(), 0.0);
  const int64_t padded = model->padded_vocab_size();
  EXPECT_EQ(model->word_embeddings().narrow(0, 1000, padded - 1000).abs().sum().item<double>(), 0.0);
}

TEST(ModernBertKeys, BiasesAndLayersAreWhatTheConfigSays) {
  auto c = small_modernbert();
  c.num_hidden_layers = 4;
  auto names = [&](const config::ModelConfig& config) {
    std::set<std::string> out;
    for (const auto& [name, _] : make_masked_lm(config, 100, 0)->hf_state_dict()) out.insert(name);
    return out;
  };
  const auto plain = names(c);
  EXPECT_FALSE(plain.count("model.layers.0.attn_norm.weight"));  // layer 0: the embedding norm serves
  EXPECT_TRUE(plain.count("model.layers.1.attn_norm.weight"));
  EXPECT_FALSE(plain.count("model.layers.1.attn.Wqkv.bias"));
  EXPECT_TRUE(plain.count("decoder.bias"));
  c.norm_bias = c.attention_bias = c.mlp_bias = c.classifier_bias = true;
  c.decoder_bias = false;
  const auto biased = names(c);
  for (const char* key : {"model.embeddings.norm.bias", "model.layers.1.attn_norm.bias", "model.layers.0.attn.Wqkv.bias",
                          "model.layers.0.attn.Wo.bias", "model.layers.0.mlp.Wi.bias", "model.layers.0.mlp.Wo.bias",
                          "head.dense.bias", "head.norm.bias"})
    EXPECT_TRUE(biased.count(key)) << key;
  EXPECT_FALSE(biased.count("decoder.bias"));

  // Which layers are global: transformers' layer_types for the same period.
  ModernBertForMaskedLM model(small_modernbert(), 100, 0);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(model->model->is_global(i), i % 3 == 0) << i;
}

}  // namespace mlm::model::modernbert_behaviour

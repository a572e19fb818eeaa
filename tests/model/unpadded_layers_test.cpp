// Unpadded layers (TokenLayout): the real tokens' rows gathered and scattered back exactly, and
// for every architecture a padded batch run on its real tokens alone gives each row's logits
// and the weights' gradients of the rows run one by one without padding.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mlm/model/make_masked_lm.h"
#include "mlm/model/token_layout.h"
#include "model_test_util.h"

namespace mlm::model::unpadded_layers {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 101, kPad = 0;

TEST(TokenLayout, GathersTheRealTokensAndScattersThemBack) {
  const auto mask = torch::tensor({1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0}, torch::kLong).view({3, 4});
  const auto layout = TokenLayout::of(mask, /*has_padding=*/true, 0.05, /*row_multiple=*/1);
  ASSERT_TRUE(layout.unpadded());
  const auto x = torch::arange(3 * 4 * 2, torch::kFloat32).view({3, 4, 2});
  const auto rows = layout.unpad(x);
  expect_tensor_near(rows, x.view({12, 2}).index_select(0, torch::tensor({0, 1, 2, 3, 4, 5, 8})), 0, "rows");
  expect_tensor_near(layout.pad(rows), x * mask.unsqueeze(2), 0, "padded back, zeros at the padding");
  expect_tensor_near(layout.unpad(mask), torch::ones({7}, torch::kLong), 0, "a [B,S] tensor's tokens");

  // Gradients: the scatter's is the gather of the padded gradient, and back.
  const auto r = rows.clone().requires_grad_(true);
  const auto weight = torch::randn({3, 4, 2});
  (layout.pad(r) * weight).sum().backward();
  expect_tensor_near(r.grad(), layout.unpad(weight), 0, "pad's gradient");
}

TEST(TokenLayout, RoundsTheRowsUpWithTheFirstPaddingPositions) {
  const auto mask = torch::tensor({1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0}, torch::kLong).view({3, 4});
  const auto layout = TokenLayout::of(mask, true, 0.05, /*row_multiple=*/4);  // 7 tokens -> 8 rows
  const auto x = torch::arange(12, torch::kFloat32).view({3, 4, 1});
  expect_tensor_near(layout.unpad(x).flatten(), torch::tensor({0, 1, 2, 3, 4, 5, 8, 6}, torch::kFloat32), 0,
                     "the tokens, then position 6");
  auto kept = x.clone().flatten();
  kept.index_fill_(0, torch::tensor({7, 9, 10, 11}), 0);
  expect_tensor_near(layout.pad(layout.unpad(x)).flatten(), kept, 0, "zeros where no row was kept");
  EXPECT_FALSE(TokenLayout::of(mask, true, 0.05, /*row_multiple=*/12).unpadded()) << "7 rows round up to all 12";
}

TEST(TokenLayout, IsTheIdentityWhereUnpaddingDoesNotPay) {
  const auto full = torch::ones({2, 10}, torch::kLong);
  EXPECT_FALSE(TokenLayout::of(full, true).unpadded()) << "no padding";
  auto little = full.clone();
  little[1][9] = 0;  // 1 position in 20: 5%
  EXPECT_FALSE(TokenLayout::of(little, true, 0.06, 1).unpadded()) << "under the share";
  EXPECT_TRUE(TokenLayout::of(little, true, 0.05, 1).unpadded()) << "at the share";
  EXPECT_FALSE(TokenLayout::of(little, false).unpadded()) << "has_padding false: the mask is not read";
  EXPECT_FALSE(TokenLayout::of(torch::Tensor(), true).unpadded()) << "no mask";
  const auto x = torch::randn({2, 10, 3});
  EXPECT_TRUE(TokenLayout().unpad(x).is_same(x));
  EXPECT_TRUE(TokenLayout().pad(x).is_same(x));
}

// ---- the models -------------------------------------------------------------------------------

config::ModelConfig tiny(config::Architecture architecture, config::NormPosition norm = config::NormPosition::post) {
  config::ModelConfig c;
  c.architecture = architecture;
  c.hidden_size = 32;
  c.num_attention_heads = 4;
  c.intermediate_size = 48;
  c.num_hidden_layers = 3;
  c.max_position_embeddings = 128;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.norm = norm;
  if (architecture == config::Architecture::modernbert) {
    c.local_attention = 8;  // half window 4: 40 positions take the block-by-block path
    c.global_attn_every_n_layers = 2;
  }
  if (architecture == config::Architecture::electra) {
    c.objective = config::Objective::rtd;
    c.embedding_size = 16;
    c.generator_hidden_ratio = 0.5;
  }
  return c;
}

// The head on every position, and so every layer on every token (no sparse last layer).
config::ModelConfig dense_head(config::ModelConfig c) {
  c.sparse_head = false;
  return c;
}

struct Row {
  std::vector<int64_t> ids;
  std::vector<int64_t> selected;  // positions within the row
};

// Rows of 40, 23 and 9 tokens, a few selected positions each.
std::vector<Row> rows() {
  torch::manual_seed(5);
  std::vector<Row> out;
  for (const auto& [length, selected] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
           {40, {0, 7, 21, 39}}, {23, {3, 22}}, {9, {1, 4, 8}}}) {
    const auto ids = torch::randint(5, kVocab, {length}, torch::kLong);
    out.push_back({std::vector<int64_t>(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + length), selected});
  }
  return out;
}

// The rows as one batch padded to `seq` (has_padding as given), with samples for the RTD pair
// drawn per selected position from `samples` in order.
MlmInputs batch_of(const std::vector<Row>& rs, int64_t seq, const torch::Tensor& samples) {
  const auto batch = static_cast<int64_t>(rs.size());
  MlmInputs in;
  in.input_ids = torch::full({batch, seq}, kPad, torch::kLong);
  in.attention_mask = torch::zeros({batch, seq}, torch::kLong);
  in.token_type_ids = torch::zeros({batch, seq}, torch::kLong);
  std::vector<int64_t> positions, labels;
  for (int64_t b = 0; b < batch; ++b) {
    const auto& r = rs[static_cast<size_t>(b)];
    const auto length = static_cast<int64_t>(r.ids.size());
    in.input_ids[b].narrow(0, 0, length).copy_(torch::tensor(r.ids, torch::kLong));
    in.attention_mask[b].narrow(0, 0, length).fill_(1);
    for (const auto s : r.selected) {
      positions.push_back(b * seq + s);
      labels.push_back((r.ids[static_cast<size_t>(s)] * 7 + 3) % kVocab);
    }
  }
  in.has_padding = true;
  in.masked_positions = torch::tensor(positions, torch::kLong);
  in.masked_labels = torch::tensor(labels, torch::kLong);
  in.rtd_samples = samples;
  return in;
}

struct Outcome {
  torch::Tensor mlm_logits, rtd_logits;  // rtd_logits: the real tokens' only, row after row
  TensorDict gradients;
};

Outcome run(MaskedLm& model, const MlmInputs& in) {
  model->zero_grad();
  auto out = model->forward(in, /*return_logits=*/true);
  auto loss = out.mlm_loss_sum;
  if (out.rtd_loss_sum.defined()) loss = loss + out.rtd_loss_sum;
  loss.backward();
  Outcome o;
  o.mlm_logits = out.mlm_logits;
  if (out.rtd_logits.defined()) o.rtd_logits = out.rtd_logits.masked_select(in.attention_mask.eq(1));
  for (const auto& [key, grad] : model->hf_gradients()) {
    if (grad.defined()) o.gradients.emplace_back(key, grad.clone());
  }
  return o;
}

struct ModelCase {
  std::string name;
  config::ModelConfig config;
};

class UnpaddedLayers : public ::testing::TestWithParam<ModelCase> {};

TEST_P(UnpaddedLayers, PaddedBatchEqualsItsRowsRunOneByOne) {
  auto model = make_masked_lm(GetParam().config, kVocab, kPad);
  const auto rs = rows();
  const auto samples = torch::randint(5, kVocab, {9}, torch::kLong);

  const auto padded = batch_of(rs, 100, samples);  // 300 positions, 72 tokens: 128 rows
  ASSERT_TRUE(TokenLayout::of(padded.attention_mask, padded.has_padding).unpadded()) << "the path under test";
  const auto batched = run(model, padded);

  // Each row alone, exactly its length: nothing to unpad.
  std::vector<torch::Tensor> mlm, rtd;
  TensorDict summed;
  int64_t first = 0;
  for (const auto& r : rs) {
    const auto count = static_cast<int64_t>(r.selected.size());
    auto in = batch_of({r}, static_cast<int64_t>(r.ids.size()), samples.narrow(0, first, count));
    first += count;
    in.has_padding = false;
    const auto alone = run(model, in);
    mlm.push_back(alone.mlm_logits);
    if (alone.rtd_logits.defined()) rtd.push_back(alone.rtd_logits);
    for (size_t i = 0; i < alone.gradients.size(); ++i) {
      if (summed.size() < alone.gradients.size()) {
        summed.push_back(alone.gradients[i]);
      } else {
        summed[i].second = summed[i].second + alone.gradients[i].second;
      }
    }
  }
  expect_tensor_near(batched.mlm_logits, torch::cat(mlm), 2e-5, "MLM logits");
  if (!rtd.empty()) expect_tensor_near(batched.rtd_logits, torch::cat(rtd), 2e-5, "RTD logits");
  ASSERT_EQ(batched.gradients.size(), summed.size());
  for (size_t i = 0; i < summed.size(); ++i) {
    ASSERT_EQ(batched.gradients[i].first, summed[i].first);
    expect_tensor_near(batched.gradients[i].second, summed[i].second, 5e-5, "gradient of " + summed[i].first);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, UnpaddedLayers,
    ::testing::Values(ModelCase{"bert_post_ln", tiny(config::Architecture::bert)},
                      ModelCase{"bert_pre_ln", tiny(config::Architecture::bert, config::NormPosition::pre)},
                      ModelCase{"bert_dense_head", dense_head(tiny(config::Architecture::bert))},
                      ModelCase{"modernbert", tiny(config::Architecture::modernbert)},
                      ModelCase{"modernbert_dense_head", dense_head(tiny(config::Architecture::modernbert))},
                      ModelCase{"electra", tiny(config::Architecture::electra)}),
    [](const auto& info) { return info.param.name; });

}  // namespace mlm::model::unpadded_layers

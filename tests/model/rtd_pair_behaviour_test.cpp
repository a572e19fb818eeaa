// The replaced-token-detection pair (rtd/rtd_pair.h) on its own, for every architecture's pair:
// the corruption and its labels, the discriminator's loss over tokens only, no gradient
// through the samples, the embedding sharing (shared and GDES), and the weight formats
// (model.pt's one dict, the two networks' Hugging Face files).
#include <gtest/gtest.h>

#include <cmath>

#include "mlm/model/rtd/replaced_tokens.h"
#include "model_test_util.h"
#include "rtd_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::rtd_pair_behaviour {
using testing::build_rtd_pair;
using testing::expect_tensor_near;
using testing::tiny_rtd_pair;

constexpr int64_t kVocab = testing::kRtdVocab, kPad = testing::kRtdPad, kBatch = 3, kSeq = 12;

// A padded batch: rows of 12, 9 and 6 tokens, 3 selected positions per row.
MlmInputs tiny_batch() {
  torch::manual_seed(7);
  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kInt64);
  in.attention_mask = torch::ones({kBatch, kSeq}, torch::kInt64);
  in.attention_mask[1].narrow(0, 9, 3).zero_();
  in.attention_mask[2].narrow(0, 6, 6).zero_();
  in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  in.token_type_ids = torch::zeros_like(in.input_ids);
  in.masked_positions = torch::tensor({1, 4, 7, 12 + 2, 12 + 3, 12 + 8, 24 + 0, 24 + 3, 24 + 5}, torch::kInt64);
  in.masked_labels = torch::randint(5, kVocab, {9}, torch::kInt64);
  return in;
}

torch::Tensor find(const TensorDict& d, const std::string& key) {
  for (const auto& [k, t] : d)
    if (k == key) return t;
  ADD_FAILURE() << "no " << key;
  return torch::Tensor();
}

TEST(RtdCorruption, LabelsOnlyTokensThatChanged) {
  const auto ids = torch::tensor({{10, 11, 12, 13}}, torch::kInt64);
  const auto positions = torch::tensor({1, 3}, torch::kInt64);
  const auto labels = torch::tensor({20, 21}, torch::kInt64);
  const auto samples = torch::tensor({20, 30}, torch::kInt64);  // the first sample is the original
  const auto c = corrupt(ids, positions, labels, samples);
  EXPECT_TRUE(torch::equal(c.input_ids, torch::tensor({{10, 20, 12, 30}}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(c.replaced, torch::tensor({{false, false, false, true}})));
}

class RtdPairBehaviour : public ::testing::TestWithParam<config::Architecture> {
 protected:
  MaskedLm pair(uint64_t seed, config::EmbeddingSharing sharing = config::EmbeddingSharing::shared) const {
    return build_rtd_pair(tiny_rtd_pair(GetParam(), sharing), seed);
  }
};

TEST_P(RtdPairBehaviour, DiscriminatorScoresEveryTokenAndNoPadding) {
  auto model = pair(0);
  auto in = tiny_batch();
  in.rtd_samples = in.masked_labels.clone();
  in.rtd_samples.narrow(0, 0, 4).add_(1);  // four replaced, five sampled right
  const auto out = model->forward(in, /*return_logits=*/true);
  EXPECT_EQ(out.rtd_replaced.item<int64_t>(), 4);
  EXPECT_EQ(out.generator_hits.item<int64_t>(), 5);
  const int64_t tokens = in.attention_mask.sum().item<int64_t>();
  ASSERT_EQ(tokens, 27);
  // The loss by hand over the 27 tokens: padding contributes nothing.
  auto replaced = torch::zeros({kBatch * kSeq});
  replaced.index_put_({in.masked_positions.narrow(0, 0, 4)}, 1.0);
  const auto logits = out.rtd_logits.reshape({-1});
  const auto token = in.attention_mask.reshape({-1}).to(torch::kBool);
  const auto by_hand = torch::binary_cross_entropy_with_logits(logits.masked_select(token),
                                                               replaced.masked_select(token), {}, {},
                                                               at::Reduction::Sum);
  expect_tensor_near(out.rtd_loss_sum, by_hand, 1e-5, "rtd_loss_sum");
  const auto called = logits.gt(0) & token;
  EXPECT_EQ(out.rtd_predicted.item<int64_t>(), called.sum().item<int64_t>());
  EXPECT_EQ(out.rtd_correct.item<int64_t>(),
            (called.eq(replaced.to(torch::kBool)) & token).sum().item<int64_t>());
  // The padding's logits are 0 and the head gets a gradient from the tokens.
  EXPECT_EQ(out.rtd_logits.masked_select(in.attention_mask.eq(0)).abs().sum().item<double>(), 0.0);
  model->zero_grad();
  model->forward(in).rtd_loss_sum.backward();
  for (const auto& p : model->rtd_pair()->head->parameters()) EXPECT_TRUE(p.grad().defined());
}

// The RTD loss reaches the generator only through the shared tables, and under GDES not at all:
// its token vectors are the discriminator's with no gradient.
TEST_P(RtdPairBehaviour, NoGradientThroughTheSamples) {
  for (const auto sharing : {config::EmbeddingSharing::shared, config::EmbeddingSharing::gdes}) {
    SCOPED_TRACE(std::string(config::to_string(sharing)));
    auto model = pair(0, sharing);
    auto& rtd = *model->rtd_pair();
    model->forward(tiny_batch()).rtd_loss_sum.backward();
    for (const auto& [key, grad] : rtd.generator->hf_gradients()) {
      if (rtd.generator->is_shared_key(key) || rtd.generator->is_tied_decoder_key(key)) continue;
      EXPECT_TRUE(!grad.defined() || grad.abs().sum().item<double>() == 0) << key;
    }
    const auto words = model->word_embeddings().grad();
    if (sharing == config::EmbeddingSharing::shared) {
      ASSERT_TRUE(words.defined());
      EXPECT_GT(words.abs().sum().item<double>(), 0);
    } else {
      EXPECT_TRUE(!words.defined() || words.abs().sum().item<double>() == 0);
      EXPECT_GT(rtd.word_embeddings_delta.grad().abs().sum().item<double>(), 0);
      EXPECT_EQ(rtd.word_embeddings_delta.grad()[kPad].abs().sum().item<double>(), 0);
    }
  }
}

// GDES starts from a zero delta, so the pair computes what the shared pair computes, and its
// export carries the sum.
TEST_P(RtdPairBehaviour, GdesStartsAsSharedAndExportsTheSum) {
  auto shared = pair(0);
  auto gdes = pair(0, config::EmbeddingSharing::gdes);
  auto in = tiny_batch();
  in.rtd_samples = (in.masked_labels + 3) % kVocab;
  const auto a = shared->forward(in, true), b = gdes->forward(in, true);
  EXPECT_TRUE(torch::equal(a.rtd_logits, b.rtd_logits));
  auto& rtd = *gdes->rtd_pair();
  {
    torch::NoGradGuard no_grad;
    rtd.word_embeddings_delta.normal_(0, 0.1);
  }
  const auto hf = to_hf_pair(rtd);
  const auto key = rtd.generator->word_embeddings_key();
  expect_tensor_near(find(hf.discriminator, key),
                     find(hf.generator, key) + rtd.word_embeddings_delta.narrow(0, 0, kVocab), 0, key);
}

// model.pt holds every parameter, the GDES delta too, and restores it bit for bit.
TEST_P(RtdPairBehaviour, ModelPtRestoresThePairExactly) {
  for (const auto sharing : {config::EmbeddingSharing::shared, config::EmbeddingSharing::gdes}) {
    SCOPED_TRACE(std::string(config::to_string(sharing)));
    auto model = pair(1, sharing);
    if (auto& rtd = *model->rtd_pair(); rtd.gdes()) {
      torch::NoGradGuard no_grad;
      rtd.word_embeddings_delta.narrow(0, 0, kVocab).normal_(0, 0.1);
    }
    const auto path = std::string(::testing::TempDir()) + "/rtd_pair_model.pt";
    save_model_pt(model, path);
    auto other = pair(2, sharing);
    load_model_pt(other, path);
    const auto want = model->named_parameters(), got = other->named_parameters();
    ASSERT_EQ(want.size(), got.size());
    for (const auto& p : want) EXPECT_TRUE(torch::equal(p.value(), got[p.key()])) << p.key();
  }
}

// The two networks' files load back into the pair exactly (the generator's decoder tied, the
// discriminator's tables checked against the generator's).
TEST_P(RtdPairBehaviour, HfPairRoundTrips) {
  auto model = pair(3);
  auto other = pair(4);
  load_hf_pair(*other->rtd_pair(), to_hf_pair(*model->rtd_pair()), "gen", "disc");
  for (const auto& p : model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), other->named_parameters()[p.key()])) << p.key();
  // A discriminator whose tables are not the generator's: one error naming them.
  auto hf = to_hf_pair(*model->rtd_pair());
  const auto words = model->rtd_pair()->generator->word_embeddings_key();
  for (auto& [key, t] : hf.discriminator)
    if (key == words) t = t + 1;
  try {
    load_hf_pair(*other->rtd_pair(), hf, "gen", "disc");
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("disc: the discriminator's " + words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("model.embedding_sharing: gdes"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Pairs, RtdPairBehaviour,
                         ::testing::Values(config::Architecture::electra, config::Architecture::deberta_v2),
                         [](const auto& info) { return std::string(config::to_string(info.param)); });

}  // namespace mlm::model::rtd_pair_behaviour

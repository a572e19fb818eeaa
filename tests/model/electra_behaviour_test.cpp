// ELECTRA's pair (objective rtd) on its own: the generator's shape, the corruption and its
// labels, the discriminator's loss over tokens only, no gradient through the sampling, the
// embedding sharing (shared and GDES), the sampler's law, and the weight formats.
#include <gtest/gtest.h>

#include <cmath>

#include "mlm/model/electra/electra.h"
#include "mlm/model/electra/electra_spec.h"
#include "mlm/model/rtd/replaced_tokens.h"
#include "mlm/model/rtd/rtd_pair.h"
#include "mlm/model/kernels/gumbel_max.h"
#include "model_test_util.h"

namespace mlm::model::electra_behaviour {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3, kSeq = 12;

config::ModelConfig tiny_electra(config::EmbeddingSharing sharing = config::EmbeddingSharing::shared) {
  config::ModelConfig c;
  c.architecture = config::Architecture::electra;
  c.objective = config::Objective::rtd;
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 128;
  c.embedding_size = 32;
  c.generator_hidden_ratio = 0.5;  // 32 wide: one head, intermediate 128
  c.max_position_embeddings = 16;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.embedding_sharing = sharing;
  return c;
}

RtdPair electra_pair(const config::ModelConfig& c) { return RtdPair(electra_spec(), c, kVocab, kPad); }
// The pair's ELECTRA networks (tests look inside them).
ElectraForMaskedLMImpl& electra_generator(RtdPair& m) { return dynamic_cast<ElectraForMaskedLMImpl&>(*m->generator); }
ElectraBodyImpl& electra_discriminator(RtdPair& m) { return dynamic_cast<ElectraBodyImpl&>(*m->discriminator); }

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

TEST(Electra, GeneratorIsDerivedAsElectrasCodeDerivesIt) {
  torch::manual_seed(0);
  auto model = electra_pair(tiny_electra());
  const auto& g = model->generator->config();
  EXPECT_EQ(g.hidden_size, 32);
  EXPECT_EQ(g.num_attention_heads, 1);  // 32 / 64, at least one
  EXPECT_EQ(g.intermediate_size, 128);  // 4 x width
  EXPECT_EQ(g.num_hidden_layers, 2);
  // Both networks project the 32-wide embeddings: the generator needs none (32 = 32).
  EXPECT_FALSE(electra_generator(model).body->embeddings_project);
  ASSERT_TRUE(electra_discriminator(model).embeddings_project);
  EXPECT_EQ(electra_discriminator(model).embeddings_project->weight.sizes(), torch::IntArrayRef({64, 32}));
  // One embedding matrix, the generator's tied decoder.
  EXPECT_TRUE(model->word_embeddings().is_same(model->generator->word_embeddings()));
}

TEST(Electra, CorruptionLabelsOnlyTokensThatChanged) {
  const auto ids = torch::tensor({{10, 11, 12, 13}}, torch::kInt64);
  const auto positions = torch::tensor({1, 3}, torch::kInt64);
  const auto labels = torch::tensor({20, 21}, torch::kInt64);
  const auto samples = torch::tensor({20, 30}, torch::kInt64);  // the first sample is the original
  const auto c = corrupt(ids, positions, labels, samples);
  EXPECT_TRUE(torch::equal(c.input_ids, torch::tensor({{10, 20, 12, 30}}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(c.replaced, torch::tensor({{false, false, false, true}})));
}

TEST(Electra, DiscriminatorScoresEveryTokenAndNoPadding) {
  torch::manual_seed(0);
  auto model = electra_pair(tiny_electra());
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
  // Padded positions' logits are not part of the loss's gradient either.
  auto with_pad = in;
  with_pad.has_padding = true;
  model->zero_grad();
  model->forward(with_pad).rtd_loss_sum.backward();
  EXPECT_TRUE(dynamic_cast<DiscriminatorHeadImpl&>(*model->head).dense_prediction->weight.grad().defined());
}

// The RTD loss reaches the generator only through the shared embeddings (ELECTRA), and under
// GDES not at all: its token vectors are the discriminator's with no gradient.
TEST(Electra, NoGradientThroughTheSamples) {
  for (const auto sharing : {config::EmbeddingSharing::shared, config::EmbeddingSharing::gdes}) {
    SCOPED_TRACE(std::string(config::to_string(sharing)));
    torch::manual_seed(0);
    auto model = electra_pair(tiny_electra(sharing));
    const auto in = tiny_batch();
    model->forward(in).rtd_loss_sum.backward();
    for (const auto& p : electra_generator(model).body->named_parameters()) {
      const auto grad = p.value().grad();
      EXPECT_TRUE(!grad.defined() || grad.abs().sum().item<double>() == 0) << p.key();
    }
    const auto words = model->word_embeddings().grad();
    if (sharing == config::EmbeddingSharing::shared) {
      ASSERT_TRUE(words.defined());
      EXPECT_GT(words.abs().sum().item<double>(), 0);
    } else {
      EXPECT_TRUE(!words.defined() || words.abs().sum().item<double>() == 0);
      EXPECT_GT(model->word_embeddings_delta.grad().abs().sum().item<double>(), 0);
      EXPECT_EQ(model->word_embeddings_delta.grad()[kPad].abs().sum().item<double>(), 0);
    }
  }
}

// GDES starts from a zero delta, so the pair computes what the shared pair computes, and its
// export carries the sum.
TEST(Electra, GdesStartsAsSharedAndExportsTheSum) {
  torch::manual_seed(0);
  auto shared = electra_pair(tiny_electra());
  torch::manual_seed(0);
  auto gdes = electra_pair(tiny_electra(config::EmbeddingSharing::gdes));
  auto in = tiny_batch();
  in.rtd_samples = (in.masked_labels + 3) % kVocab;
  const auto a = shared->forward(in, true), b = gdes->forward(in, true);
  EXPECT_TRUE(torch::equal(a.rtd_logits, b.rtd_logits));
  {
    torch::NoGradGuard no_grad;
    gdes->word_embeddings_delta.normal_(0, 0.1);
  }
  const auto pair = to_hf_pair(*gdes);
  auto find = [](const TensorDict& d, const std::string& key) {
    for (const auto& [k, t] : d) if (k == key) return t;
    ADD_FAILURE() << "no " << key;
    return torch::Tensor();
  };
  const auto key = "electra.embeddings.word_embeddings.weight";
  expect_tensor_near(find(pair.discriminator, key),
                     find(pair.generator, key) + gdes->word_embeddings_delta.narrow(0, 0, kVocab), 0, key);
}

// model.pt holds every parameter, the GDES delta too, and restores it bit for bit.
TEST(Electra, ModelPtRestoresThePairExactly) {
  for (const auto sharing : {config::EmbeddingSharing::shared, config::EmbeddingSharing::gdes}) {
    SCOPED_TRACE(std::string(config::to_string(sharing)));
    torch::manual_seed(1);
    auto model = electra_pair(tiny_electra(sharing));
    if (model->gdes()) {
      torch::NoGradGuard no_grad;
      model->word_embeddings_delta.narrow(0, 0, kVocab).normal_(0, 0.1);
    }
    const auto path = std::string(::testing::TempDir()) + "/electra_model.pt";
    save_model_pt(model, path);
    torch::manual_seed(2);
    auto other = electra_pair(tiny_electra(sharing));
    load_model_pt(other, path);
    const auto want = model->named_parameters(), got = other->named_parameters();
    ASSERT_EQ(want.size(), got.size());
    for (const auto& p : want) EXPECT_TRUE(torch::equal(p.value(), got[p.key()])) << p.key();
  }
}

// The HF pair loads back into the pair exactly (the generator's decoder tied, the
// discriminator's embeddings checked against the generator's).
TEST(Electra, HfPairRoundTrips) {
  torch::manual_seed(3);
  auto model = electra_pair(tiny_electra());
  torch::manual_seed(4);
  auto other = electra_pair(tiny_electra());
  load_hf_pair(*other, to_hf_pair(*model), "gen", "disc");
  for (const auto& p : model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), other->named_parameters()[p.key()])) << p.key();
  // A discriminator whose embeddings are not the generator's: one error naming them.
  auto pair = to_hf_pair(*model);
  for (auto& [key, t] : pair.discriminator)
    if (key == "electra.embeddings.position_embeddings.weight") t = t + 1;
  try {
    load_hf_pair(*other, pair, "gen", "disc");
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("disc: the discriminator's electra.embeddings.position_embeddings"),
              std::string::npos)
        << e.what();
  }
}

// Gumbel-max samples follow softmax(logits / T): frequencies of 20000 draws per row against
// the probabilities (binomial bounds of 5 standard deviations), the same draws for a seed
// whatever the thread count, and only real vocabulary columns.
TEST(GumbelMax, SamplesTheSoftmax) {
  const int64_t rows = 20000, vocab = 5;
  auto row = torch::tensor({0.5f, -1.0f, 2.0f, 0.0f, 1.0f});
  auto logits = torch::cat({row.expand({rows, vocab}), torch::full({rows, 3}, 100.0f)}, 1);  // padded columns
  for (const double t : {1.0, 0.5}) {
    const auto samples = kernels::gumbel_max_sample(logits, vocab, t, /*seed=*/11);
    ASSERT_LT(samples.max().item<int64_t>(), vocab);
    const auto counts = torch::bincount(samples, {}, vocab).to(torch::kFloat64);
    const auto p = torch::softmax(row.to(torch::kFloat64) / t, 0);
    const auto sd = torch::sqrt(p * (1 - p) * rows);
    const auto z = ((counts - p * rows).abs() / sd).max().item<double>();
    EXPECT_LT(z, 5.0) << "temperature " << t << ": counts " << counts << " p " << p;
  }
  const auto one = kernels::gumbel_max_sample(logits, vocab, 1.0, 5);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto serial = kernels::gumbel_max_sample(logits, vocab, 1.0, 5);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one, serial));
  // bf16 logits are read as they are.
  EXPECT_TRUE(torch::equal(kernels::gumbel_max_sample(logits.to(torch::kBFloat16), vocab, 1.0, 5), one));
}

}  // namespace mlm::model::electra_behaviour

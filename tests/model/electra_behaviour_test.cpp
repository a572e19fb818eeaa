// ELECTRA's pair (objective rtd) on its own: the generator's shape and the sampler's law (what
// every pair does besides: rtd_pair_behaviour_test.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "mlm/model/electra/electra.h"
#include "mlm/model/kernels/gumbel_max.h"
#include "rtd_test_util.h"

namespace mlm::model::electra_behaviour {

// The pair's ELECTRA networks (the test looks inside them).
ElectraForMaskedLMImpl& electra_generator(MaskedLm& m) {
  return dynamic_cast<ElectraForMaskedLMImpl&>(*m->rtd_pair()->generator);
}
ElectraBodyImpl& electra_discriminator(MaskedLm& m) {
  return dynamic_cast<ElectraBodyImpl&>(*m->rtd_pair()->discriminator);
}

TEST(Electra, GeneratorIsDerivedAsElectrasCodeDerivesIt) {
  auto model = testing::build_rtd_pair(testing::tiny_rtd_pair(config::Architecture::electra), 0);
  const auto& g = model->rtd_pair()->generator->config();
  EXPECT_EQ(g.hidden_size, 32);
  EXPECT_EQ(g.num_attention_heads, 1);  // 32 / 64, at least one
  EXPECT_EQ(g.intermediate_size, 128);  // 4 x width
  EXPECT_EQ(g.num_hidden_layers, 2);
  // Both networks project the 32-wide embeddings: the generator needs none (32 = 32).
  EXPECT_FALSE(electra_generator(model).body->embeddings_project);
  ASSERT_TRUE(electra_discriminator(model).embeddings_project);
  EXPECT_EQ(electra_discriminator(model).embeddings_project->weight.sizes(), torch::IntArrayRef({64, 32}));
  // One embedding matrix, the generator's tied decoder.
  EXPECT_TRUE(model->word_embeddings().is_same(model->rtd_pair()->generator->word_embeddings()));
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

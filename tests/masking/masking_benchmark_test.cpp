// Not a pass/fail speed test (targets live in benchmarks): prints how long collating one
// 32 x 128 batch takes for each strategy, so a regression is visible in the test log.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "masking/masking_test_util.h"
#include "mlm/masking/masking_collator.h"

namespace mlm::masking {
namespace {

TEST(MaskingBenchmark, Collate32x128) {
  using clock = std::chrono::steady_clock;
  const auto seqs = testing::make_sequences(32, 128, 1);
  for (auto strategy : {config::MaskingStrategy::token, config::MaskingStrategy::whole_word,
                        config::MaskingStrategy::span}) {
    config::MaskingConfig cfg;
    cfg.strategy = strategy;
    const MaskingCollator collate(cfg, testing::make_vocab(), 128, config::Objective::mlm);
    constexpr int kBatches = 200;
    int64_t masked = 0;
    const auto start = clock::now();
    for (int b = 0; b < kBatches; ++b) masked += collate(seqs, b).num_masked();
    const double seconds = std::chrono::duration<double>(clock::now() - start).count();
    std::printf("[masking] %s: %.1f us per 32x128 batch, %.1fM tokens/s (%lld selected)\n",
                std::string(config::to_string(strategy)).c_str(), 1e6 * seconds / kBatches,
                32.0 * 128 * kBatches / seconds / 1e6, static_cast<long long>(masked));
    EXPECT_GT(masked, 0);
  }
}

}  // namespace
}  // namespace mlm::masking

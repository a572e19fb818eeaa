// Statistical tests of selection and corruption. Fixed seeds; every bound is >= 4.5 standard
// deviations of the quantity under the intended rule and tight enough that a wrong rule fails
// (e.g. a floor-only rounding, 85/10/5, or a rate of p(1 +- 3%)).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "masking/masking_test_util.h"
#include "mlm/masking/masking_collator.h"

namespace mlm::masking {
namespace {

using config::MaskCount;
using config::MaskingConfig;
using config::MaskingStrategy;
using config::Objective;
using namespace testing;

constexpr int64_t kSequences = 1200;  // ~112k maskable tokens
constexpr double kNonSpecial = kVocabSize - kFirstRegularId;

const std::vector<data::PackedSequence>& rate_corpus() {
  static const auto seqs = make_sequences(kSequences, kSeqLen, 2024);
  return seqs;
}

// ---- selection rate ---------------------------------------------------------------------

struct RateCase {
  MaskCount count;
  double p;
};

class SelectionRate : public ::testing::TestWithParam<RateCase> {};

TEST_P(SelectionRate, TokenStrategyHitsPWithTheRightSpread) {
  const auto [count, p] = GetParam();
  MaskingConfig cfg;
  cfg.count = count;
  cfg.mlm_probability = p;
  const MaskingCollator collate(cfg, make_vocab(), kSeqLen, Objective::mlm);
  const MaskedBatch batch = collate(rate_corpus(), 31337);

  double n_total = 0, expected = 0, variance = 0;
  for (size_t r = 0; r < rate_corpus().size(); ++r) {
    const double n = static_cast<double>(count_maskable(rate_corpus()[r]));
    ASSERT_GE(n, 1);
    const int64_t k = selected_in_row(batch, static_cast<int64_t>(r));
    n_total += n;
    const double x = p * n, lo = std::floor(x), frac = x - lo;
    if (count == MaskCount::exact) {
      // Probabilistic rounding: floor or ceil of p·n, never 0.
      ASSERT_TRUE(k == static_cast<int64_t>(lo) || k == static_cast<int64_t>(std::ceil(x)))
          << "row " << r << ": " << k << " selected of " << n;
      ASSERT_GE(k, 1);
      expected += lo >= 1 ? x : 1.0;
      variance += lo >= 1 ? frac * (1 - frac) : 0.0;
    } else {
      expected += x;
      variance += n * p * (1 - p);
    }
  }
  ASSERT_GE(n_total, 100000);
  const double selected = static_cast<double>(batch.num_masked());
  const double rate = selected / n_total;
  std::printf("[masking] count=%s p=%.2f: %.0f of %.0f maskable selected, rate %.5f\n",
              std::string(config::to_string(count)).c_str(), p, selected, n_total, rate);
  // The brief's binomial form, and the tighter bound from this mode's own variance (for exact
  // mode that is the rounding variance alone, which catches a floor-only or min-one bias).
  EXPECT_NEAR(rate, p, binomial_bound(p, n_total));
  EXPECT_NEAR(selected, expected, 4.5 * std::sqrt(variance) + 1e-9);
}

INSTANTIATE_TEST_SUITE_P(CountModes, SelectionRate,
                         ::testing::Values(RateCase{MaskCount::exact, 0.15},
                                           RateCase{MaskCount::exact, 0.4},
                                           RateCase{MaskCount::bernoulli, 0.15},
                                           RateCase{MaskCount::bernoulli, 0.4}));

TEST(SelectionRate, ExactModeSelectsOneInAShortSequence) {
  const MaskingCollator collate(MaskingConfig{}, make_vocab(), 8, Objective::mlm);
  data::PackedSequence seq;
  seq.ids = {2, 10, 11, 3};  // 2 maskable: 0.15 * 2 = 0.3 -> at least 1
  seq.token_type_ids.assign(4, 0);
  for (uint64_t id = 0; id < 200; ++id) {
    seq.sample_id = id;
    ASSERT_EQ(collate({seq}, 1).num_masked(), 1);
  }
}

TEST(SelectionRate, MaxPredictionsPerSeqCaps) {
  for (auto strategy :
       {MaskingStrategy::token, MaskingStrategy::whole_word, MaskingStrategy::span}) {
    for (auto count : {MaskCount::exact, MaskCount::bernoulli}) {
      MaskingConfig cfg;
      cfg.strategy = strategy;
      cfg.count = count;
      cfg.mlm_probability = 0.4;
      cfg.max_predictions_per_seq = 5;
      const MaskingCollator collate(cfg, make_vocab(), kSeqLen, Objective::mlm);
      const MaskedBatch batch = collate(rate_corpus(), 3);
      int64_t at_cap = 0;
      for (int64_t r = 0; r < batch.batch_size; ++r) {
        const int64_t k = selected_in_row(batch, r);
        ASSERT_LE(k, 5) << config::to_string(strategy) << " row " << r;
        at_cap += k == 5;
      }
      // p·n >= 0.4 * 60 = 24 >> 5: token strategy always reaches the cap; whole words and
      // spans reach it unless no remaining word fits exactly, which single-piece words make rare.
      if (strategy == MaskingStrategy::token) {
        EXPECT_EQ(at_cap, batch.batch_size);
      } else {
        EXPECT_GT(at_cap, batch.batch_size * 9 / 10) << config::to_string(strategy);
      }
    }
  }
}

// ---- corruption among selected positions -------------------------------------------------

struct SplitCase {
  MaskingStrategy strategy;
  double mask;
  double random;
};

class CorruptionSplit : public ::testing::TestWithParam<SplitCase> {};

TEST_P(CorruptionSplit, PerPositionRatesMatchTheConfiguredSplit) {
  const auto [strategy, mask_p, random_p] = GetParam();
  MaskingConfig cfg;
  cfg.strategy = strategy;
  cfg.mlm_probability = 0.4;
  cfg.mask_replace_prob = mask_p;
  cfg.random_replace_prob = random_p;
  const auto vocab = make_vocab();
  const MaskingCollator collate(cfg, vocab, kSeqLen, Objective::mlm);
  const MaskedBatch batch = collate(rate_corpus(), 99);

  double masked = 0, kept = 0, replaced = 0;
  for (int64_t cell : batch.masked_positions) {
    const int64_t input = batch.input_ids[cell], original = batch.labels[cell];
    if (input == vocab.ids.mask) {
      ++masked;
    } else if (input == original) {
      ++kept;  // left unchanged, or a random draw that hit the original id
    } else {
      ASSERT_FALSE(vocab.is_special[input]) << "random replacement is special";
      ++replaced;
    }
  }
  const double n = static_cast<double>(batch.num_masked());
  ASSERT_GT(n, 40000);
  const double keep_p = 1 - mask_p - random_p;
  // A random draw equals the original id with probability 1/|non-special|.
  const double want_kept = keep_p + random_p / kNonSpecial;
  const double want_replaced = random_p * (1 - 1 / kNonSpecial);
  std::printf("[masking] %s split %.2f/%.2f: mask %.4f random %.4f kept %.4f of %.0f\n",
              std::string(config::to_string(strategy)).c_str(), mask_p, random_p, masked / n,
              replaced / n, kept / n, n);
  EXPECT_NEAR(masked / n, mask_p, binomial_bound(mask_p, n));
  EXPECT_NEAR(replaced / n, want_replaced, binomial_bound(want_replaced, n));
  EXPECT_NEAR(kept / n, want_kept, binomial_bound(want_kept, n));
}

INSTANTIATE_TEST_SUITE_P(
    Splits, CorruptionSplit,
    ::testing::Values(SplitCase{MaskingStrategy::token, 0.8, 0.1},
                      SplitCase{MaskingStrategy::token, 0.5, 0.25},
                      SplitCase{MaskingStrategy::whole_word, 0.8, 0.1},
                      SplitCase{MaskingStrategy::whole_word, 0.5, 0.25}));

TEST(CorruptionSplit, SpanStrategyDecidesOncePerSpan) {
  for (const auto [mask_p, random_p] : {std::pair{0.8, 0.1}, std::pair{0.5, 0.25}}) {
    MaskingConfig cfg;
    cfg.strategy = MaskingStrategy::span;
    cfg.mlm_probability = 0.4;
    cfg.mask_replace_prob = mask_p;
    cfg.random_replace_prob = random_p;
    const auto vocab = make_vocab();
    const MaskingCollator collate(cfg, vocab, kSeqLen, Objective::mlm);
    const uint64_t seed = 5;
    const MaskedBatch batch = collate(rate_corpus(), seed);

    double spans = 0, masked = 0, kept = 0, replaced = 0, want_kept = 0;
    for (size_t r = 0; r < rate_corpus().size(); ++r) {
      for (const MaskedSpan& span : collate.select(rate_corpus()[r], seed)) {
        int64_t n_mask = 0, n_same = 0;
        for (int32_t p = span.begin; p < span.end; ++p) {
          const int64_t cell = static_cast<int64_t>(r) * kSeqLen + p;
          const int64_t input = batch.input_ids[cell];
          n_mask += input == vocab.ids.mask;
          n_same += input == batch.labels[cell];
          ASSERT_TRUE(input == vocab.ids.mask || !vocab.is_special[input]);
        }
        const int64_t len = span.end - span.begin;
        ASSERT_TRUE(n_mask == 0 || n_mask == len) << "a span is partly [MASK]";
        ++spans;
        // A random span looks kept only if every draw hits its original id.
        want_kept += (1 - mask_p - random_p) + random_p * std::pow(1 / kNonSpecial, len);
        if (n_mask == len) {
          ++masked;
        } else if (n_same == len) {
          ++kept;
        } else {
          ++replaced;
        }
      }
    }
    ASSERT_GT(spans, 10000);
    want_kept /= spans;
    const double want_replaced = 1 - mask_p - want_kept;
    EXPECT_NEAR(masked / spans, mask_p, binomial_bound(mask_p, spans));
    EXPECT_NEAR(kept / spans, want_kept, binomial_bound(want_kept, spans));
    EXPECT_NEAR(replaced / spans, want_replaced, binomial_bound(want_replaced, spans));
  }
}

}  // namespace
}  // namespace mlm::masking

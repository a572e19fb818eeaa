// Whole-word and span masking: words are never split, spans are whole words inside one
// maskable run, span lengths follow SpanBERT's truncated geometric law, and the selected
// share stays p.
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

const std::vector<data::PackedSequence>& word_corpus() {
  static const auto seqs = make_sequences(1200, kSeqLen, 77);
  return seqs;
}

/// Word index of each position (-1: not maskable), computed here independently of
/// find_maskable: a word starts at a marker piece or after a non-maskable position.
std::vector<int64_t> word_ids(const data::PackedSequence& seq) {
  std::vector<int64_t> out(seq.ids.size(), -1);
  int64_t word = -1;
  for (size_t i = 0; i < seq.ids.size(); ++i) {
    if (seq.ids[i] < kFirstRegularId) continue;
    const bool after_special = i == 0 || seq.ids[i - 1] < kFirstRegularId;
    if (after_special || !is_continuation(seq.ids[i])) ++word;
    out[i] = word;
  }
  return out;
}

void expect_rate(const MaskedBatch& batch, double p, const char* what) {
  double n = 0;
  for (const auto& seq : word_corpus()) n += static_cast<double>(count_maskable(seq));
  const double rate = static_cast<double>(batch.num_masked()) / n;
  std::printf("[masking] %s: rate %.5f over %.0f maskable (p = %.2f)\n", what, rate, n, p);
  EXPECT_NEAR(rate, p, binomial_bound(p, n)) << what;
}

class WordStrategies
    : public ::testing::TestWithParam<std::tuple<MaskingStrategy, MaskCount, double>> {};

TEST_P(WordStrategies, EveryWordIsSelectedWholeOrNotAtAllAndTheRateIsP) {
  const auto [strategy, count, p] = GetParam();
  MaskingConfig cfg;
  cfg.strategy = strategy;
  cfg.count = count;
  cfg.mlm_probability = p;
  const MaskingCollator collate(cfg, make_vocab(), kSeqLen, Objective::mlm);
  const MaskedBatch batch = collate(word_corpus(), 4242);
  int64_t multi_piece_words_selected = 0;
  for (size_t r = 0; r < word_corpus().size(); ++r) {
    const auto words = word_ids(word_corpus()[r]);
    for (size_t i = 1; i < words.size(); ++i) {
      if (words[i] < 0 || words[i] != words[i - 1]) continue;
      const bool a = batch.labels[r * kSeqLen + i - 1] != -100;
      const bool b = batch.labels[r * kSeqLen + i] != -100;
      ASSERT_EQ(a, b) << "word split at row " << r << " position " << i;
      multi_piece_words_selected += a;
    }
  }
  EXPECT_GT(multi_piece_words_selected, 1000);  // the check above was exercised
  const std::string what = std::string(config::to_string(strategy)) + " " +
                           std::string(config::to_string(count));
  expect_rate(batch, p, what.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Modes, WordStrategies,
    ::testing::Combine(::testing::Values(MaskingStrategy::whole_word, MaskingStrategy::span),
                       ::testing::Values(MaskCount::exact, MaskCount::bernoulli),
                       ::testing::Values(0.15, 0.4)));

TEST(SpanMasking, SpansAreWholeWordsInsideOneRunAndLengthsFollowSpanBert) {
  MaskingConfig cfg;
  cfg.strategy = MaskingStrategy::span;
  cfg.mlm_probability = 0.2;
  cfg.span_p = 0.2;
  cfg.max_span = 10;
  const MaskingCollator collate(cfg, make_vocab(), kSeqLen, Objective::mlm);
  const auto seqs = make_sequences(3000, kSeqLen, 1234);
  double spans = 0, sampled_sum = 0, realized_sum = 0;
  for (const auto& seq : seqs) {
    const auto words = word_ids(seq);
    for (const MaskedSpan& span : collate.select(seq, 8)) {
      ASSERT_GE(span.words, 1);
      ASSERT_LE(span.words, span.sampled_words);
      ASSERT_LE(span.sampled_words, 10);
      // Starts at a word start, ends at a word end, crosses no special token.
      ASSERT_GE(words[span.begin], 0);
      ASSERT_TRUE(span.begin == 0 || words[span.begin - 1] != words[span.begin]);
      ASSERT_TRUE(static_cast<size_t>(span.end) == words.size() ||
                  words[span.end] != words[span.end - 1]);
      for (int32_t p = span.begin; p < span.end; ++p) {
        ASSERT_GE(words[p], 0) << "span crosses a special token";
      }
      ASSERT_EQ(words[span.end - 1] - words[span.begin] + 1, span.words);
      ++spans;
      sampled_sum += span.sampled_words;
      realized_sum += span.words;
    }
  }
  // Expected length and variance from the formula, independently of SpanLengthDistribution.
  double norm = 0, m1 = 0, m2 = 0;
  for (int k = 1; k <= 10; ++k) {
    const double w = 0.2 * std::pow(0.8, k - 1);
    norm += w;
    m1 += k * w;
    m2 += k * k * w;
  }
  const double mean = m1 / norm, variance = m2 / norm - mean * mean;
  std::printf(
      "[masking] span: %.0f spans, mean drawn length %.4f words (expected %.4f), mean "
      "realized %.4f (cut at run ends, selected words and the budget)\n",
      spans, sampled_sum / spans, mean, realized_sum / spans);
  ASSERT_GT(spans, 12000);
  EXPECT_NEAR(mean, 3.80, 0.005);
  EXPECT_NEAR(sampled_sum / spans, mean, 4.5 * std::sqrt(variance / spans));
}

}  // namespace
}  // namespace mlm::masking

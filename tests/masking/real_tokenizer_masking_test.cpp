// Whole-word and span masking on real text: a sentencepiece model trained on the fixture
// corpus, the corpus packed by the streaming dataset (documents joined by [SEP]), masked by
// the collator. The synthetic vocabulary of the other masking tests decides word starts by a
// rule of ids; here they come from the pieces themselves (U+2581), read independently of
// VocabInfo, and words are mostly several pieces long.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "masking/masking_test_util.h"
#include "mlm/config/run_config.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/masking/masking_collator.h"
#include "text/tokenizer_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other masking tests, whose anonymous-namespace helpers have the same names.
namespace mlm::masking::real_text {

using config::MaskCount;
using config::MaskingConfig;
using config::MaskingStrategy;
using config::Objective;
using config::resolve_data_plan;

constexpr int64_t kSeqLen = 128;
constexpr int kSeeds = 8;  // masking seeds per case: 8 independent masks of the corpus

const text::Tokenizer& tokenizer() { return mlm::testing::fixture_tokenizer(); }

/// The fixture corpus packed as the trainer packs it (one pass, fixed order).
const std::vector<data::PackedSequence>& corpus() {
  static const auto seqs = [] {
    config::RunConfig cfg;
    cfg.data.train_files = {mlm::testing::corpus_path("train.txt")};
    cfg.data.valid_files = cfg.data.train_files;
    cfg.data.seq_len = kSeqLen;
    cfg.data.num_workers = 1;
    data::StreamingDataset dataset(resolve_data_plan(cfg), tokenizer(), data::Split::valid);
    std::vector<data::PackedSequence> out;
    for (data::PackedSequence seq; dataset.next(seq);) out.push_back(seq);
    return out;
  }();
  return seqs;
}

bool is_special_piece(const std::string& piece) {
  for (const char* special : text::kSpecialPieces) {
    if (piece == special) return true;
  }
  return false;
}

bool starts_with_marker(const std::string& piece) { return piece.rfind("\xE2\x96\x81", 0) == 0; }

/// Word index of each position (-1: special or padding), from the pieces' text: a word starts
/// at a piece with the U+2581 marker or after a non-maskable position.
std::vector<int64_t> word_ids(const data::PackedSequence& seq) {
  std::vector<int64_t> out(seq.ids.size(), -1);
  int64_t word = -1;
  bool after_special = true;
  for (size_t i = 0; i < seq.ids.size(); ++i) {
    const std::string piece = tokenizer().id_to_piece(seq.ids[i]);
    if (is_special_piece(piece)) {
      after_special = true;
      continue;
    }
    if (after_special || starts_with_marker(piece)) ++word;
    out[i] = word;
    after_special = false;
  }
  return out;
}

int64_t maskable(const data::PackedSequence& seq) {
  int64_t n = 0;
  for (int64_t w : word_ids(seq)) n += w >= 0;
  return n;
}

MaskingConfig masking(MaskingStrategy strategy, MaskCount count = MaskCount::exact) {
  MaskingConfig cfg;
  cfg.strategy = strategy;
  cfg.count = count;
  return cfg;
}

MaskingCollator collator(const MaskingConfig& cfg) {
  return MaskingCollator(cfg, tokenizer().vocab(), kSeqLen, Objective::mlm);
}

TEST(RealTokenizerMasking, CorpusHasMultiPieceWordsAndTheVocabTablesAgreeWithThePieces) {
  const auto& vocab = tokenizer().vocab();
  ASSERT_EQ(vocab.size, 200);
  for (int32_t id = 0; id < vocab.size; ++id) {
    const std::string piece = tokenizer().id_to_piece(id);
    EXPECT_EQ(vocab.is_special[id] != 0, is_special_piece(piece)) << id << " " << piece;
    if (!is_special_piece(piece)) {
      EXPECT_EQ(vocab.starts_word[id] != 0, starts_with_marker(piece)) << id << " " << piece;
    }
  }
  // The checks below mean something only if words of several pieces are common.
  int64_t positions = 0, words = 0;
  for (const auto& seq : corpus()) {
    const auto w = word_ids(seq);
    int64_t last = -1;
    for (int64_t id : w) {
      if (id < 0) continue;
      ++positions;
      words += id != last;
      last = id;
    }
  }
  std::printf("[masking] fixture corpus: %zu sequences, %lld maskable pieces in %lld words\n",
              corpus().size(), static_cast<long long>(positions), static_cast<long long>(words));
  ASSERT_GE(corpus().size(), 100u);
  EXPECT_GT(static_cast<double>(positions) / static_cast<double>(words), 1.5);
}

class RealTextWordStrategies
    : public ::testing::TestWithParam<std::tuple<MaskingStrategy, MaskCount>> {};

// Every selected group is whole words (whole_word: exactly one) of one maskable run, the batch
// labels are exactly the groups' positions, no word is ever partly selected, and the count
// follows masking.count with masking.mlm_probability.
TEST_P(RealTextWordStrategies, GroupsAreWholeWordsAndTheRateIsP) {
  const auto [strategy, count] = GetParam();
  const MaskingConfig cfg = masking(strategy, count);
  const MaskingCollator collate = collator(cfg);
  double selected = 0, n = 0, expected = 0, variance = 0;
  int64_t multi_piece_groups = 0, groups = 0, short_rows = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const MaskedBatch batch = collate(corpus(), seed);
    for (size_t r = 0; r < corpus().size(); ++r) {
      const auto& seq = corpus()[r];
      const auto words = word_ids(seq);
      const int64_t* labels = batch.labels.data() + r * kSeqLen;
      std::vector<uint8_t> in_group(kSeqLen, 0);
      for (const MaskedSpan& g : collate.select(seq, seed)) {
        ASSERT_LT(g.begin, g.end);
        ASSERT_GE(words[g.begin], 0) << "group starts on a special token, row " << r;
        ASSERT_TRUE(g.begin == 0 || words[g.begin - 1] != words[g.begin])
            << "group starts inside a word, row " << r << " position " << g.begin;
        ASSERT_TRUE(static_cast<size_t>(g.end) == words.size() || words[g.end] != words[g.end - 1])
            << "group ends inside a word, row " << r << " position " << g.end;
        for (int32_t p = g.begin; p < g.end; ++p) {
          ASSERT_GE(words[p], 0) << "group crosses a special token, row " << r;
          if (p > g.begin) ASSERT_LE(words[p] - words[p - 1], 1) << "group is not contiguous";
          in_group[p] = 1;
        }
        const int64_t covered = words[g.end - 1] - words[g.begin] + 1;
        ASSERT_EQ(covered, g.words);
        if (strategy == MaskingStrategy::whole_word) {
          ASSERT_EQ(g.words, 1);
        } else {
          ASSERT_GE(g.words, 1);
          ASSERT_LE(g.words, g.sampled_words);
          ASSERT_LE(g.sampled_words, cfg.max_span);
        }
        multi_piece_groups += g.end - g.begin > g.words;
        ++groups;
      }
      int64_t k = 0;
      for (int64_t s = 0; s < kSeqLen; ++s) {
        ASSERT_EQ(labels[s] != -100, in_group[s] != 0) << "row " << r << " position " << s;
        if (labels[s] != -100) ASSERT_EQ(labels[s], seq.ids[s]);
        k += labels[s] != -100;
      }
      selected += static_cast<double>(k);
      const double n_row = static_cast<double>(maskable(seq)), x = cfg.mlm_probability * n_row;
      const double lo = std::floor(x), frac = x - lo;
      if (count == MaskCount::exact) {
        // Budget floor(p·n) or its ceiling (at least 1). whole_word may fill it short only
        // when no unselected word fits in what is left (selection.h).
        const int64_t floor_budget = std::max<int64_t>(1, static_cast<int64_t>(lo));
        ASSERT_LE(k, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(x)))) << "row " << r;
        short_rows += k < floor_budget;
        if (k < floor_budget && strategy == MaskingStrategy::whole_word) {
          for (size_t s = 0; s < words.size();) {
            const size_t begin = s;
            while (s < words.size() && words[s] == words[begin]) ++s;
            if (words[begin] >= 0 && labels[begin] == -100) {
              ASSERT_GT(static_cast<int64_t>(s - begin), floor_budget - k)
                  << "row " << r << " fell short though a word of " << s - begin << " fits";
            }
          }
        }
        expected += lo >= 1 ? x : 1.0;
        variance += lo >= 1 ? frac * (1 - frac) : 0.0;
      } else {
        expected += x;
        variance += x * (1 - cfg.mlm_probability);
      }
      // Independently of select(): the labels never split a word.
      for (size_t s = 1; s < words.size(); ++s) {
        if (words[s] >= 0 && words[s] == words[s - 1]) {
          ASSERT_EQ(labels[s] != -100, labels[s - 1] != -100)
              << "word split at row " << r << " position " << s;
        }
      }
      n += static_cast<double>(maskable(seq));
    }
  }
  EXPECT_GT(multi_piece_groups, groups / 4) << "too few multi-piece words to test anything";
  // Each seed masks independently, so the variance of the pooled count is the sum over rows
  // and seeds of the budget's: frac·(1 - frac) for the probabilistic rounding of exact,
  // n·p·(1 - p) for bernoulli. 4.5 standard deviations; the few rows that whole words fill
  // short (checked above) lower the mean by far less.
  const double p = cfg.mlm_probability, bound = 4.5 * std::sqrt(variance);
  std::printf("[masking] real text %s %s: rate %.5f (expected %.5f) over %.0f maskable, "
              "count bound +-%.1f, %lld rows short\n",
              std::string(config::to_string(strategy)).c_str(),
              std::string(config::to_string(count)).c_str(), selected / n, expected / n, n, bound,
              static_cast<long long>(short_rows));
  EXPECT_NEAR(selected, expected, bound);
  EXPECT_NEAR(selected / n, p, testing::binomial_bound(p, n));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, RealTextWordStrategies,
    ::testing::Combine(::testing::Values(MaskingStrategy::whole_word, MaskingStrategy::span),
                       ::testing::Values(MaskCount::exact, MaskCount::bernoulli)),
    [](const auto& info) {
      return std::string(config::to_string(std::get<0>(info.param))) + "_" +
             std::string(config::to_string(std::get<1>(info.param)));
    });

// Span lengths on real text: drawn from SpanBERT's geometric law truncated at max_span (mean
// and variance from the formula), and cut short only by the run end, a selected word or the
// budget, so a realized span is never longer than drawn.
TEST(RealTextSpans, DrawnLengthsFollowTheConfiguredLaw) {
  MaskingConfig cfg = masking(MaskingStrategy::span);
  cfg.span_p = 0.3;
  cfg.max_span = 6;
  const MaskingCollator collate = collator(cfg);
  double spans = 0, drawn = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    for (const auto& seq : corpus()) {
      for (const MaskedSpan& g : collate.select(seq, seed)) {
        ASSERT_GE(g.words, 1);
        ASSERT_LE(g.words, g.sampled_words);
        ASSERT_LE(g.sampled_words, cfg.max_span);
        ++spans;
        drawn += g.sampled_words;
      }
    }
  }
  double norm = 0, m1 = 0, m2 = 0;
  for (int k = 1; k <= cfg.max_span; ++k) {
    const double w = cfg.span_p * std::pow(1 - cfg.span_p, k - 1);
    norm += w;
    m1 += k * w;
    m2 += k * k * w;
  }
  const double mean = m1 / norm, variance = m2 / norm - mean * mean;
  std::printf("[masking] real text spans: %.0f spans, mean drawn %.4f words (expected %.4f)\n",
              spans, drawn / spans, mean);
  ASSERT_GT(spans, 2000);
  // Independent draws: the mean of `spans` lengths within 4.5 standard errors.
  EXPECT_NEAR(drawn / spans, mean, 4.5 * std::sqrt(variance / spans));
}

}  // namespace mlm::masking::real_text

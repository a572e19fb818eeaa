// Layout, validation, invariants and determinism of the collator (all strategies).
#include "mlm/masking/masking_collator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "mlm/util/errors.h"
#include "masking/masking_test_util.h"

namespace mlm::masking {
namespace {

using config::MaskCount;
using config::MaskingConfig;
using config::MaskingStrategy;
using config::Objective;
using namespace testing;

MaskingConfig config_for(MaskingStrategy strategy, MaskCount count = MaskCount::exact) {
  MaskingConfig cfg;
  cfg.strategy = strategy;
  cfg.count = count;
  return cfg;
}

void expect_same_batch(const MaskedBatch& a, const MaskedBatch& b) {
  EXPECT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.seq_len, b.seq_len);
  EXPECT_EQ(a.input_ids, b.input_ids);
  EXPECT_EQ(a.token_type_ids, b.token_type_ids);
  EXPECT_EQ(a.attention_mask, b.attention_mask);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.masked_positions, b.masked_positions);
  EXPECT_EQ(a.nsp_labels, b.nsp_labels);
}

// ---- validation -------------------------------------------------------------------------

std::string config_error_key(const MaskingConfig& cfg, const text::VocabInfo& vocab,
                             int64_t seq_len = 128) {
  try {
    MaskingCollator(cfg, vocab, seq_len, Objective::mlm);
  } catch (const ConfigError& e) {
    return e.key();
  }
  return "<no error>";
}

TEST(MaskingCollatorConfig, RejectsEveryOutOfRangeSetting) {
  const auto vocab = make_vocab();
  auto with = [](auto edit) {
    MaskingConfig cfg;
    edit(cfg);
    return cfg;
  };
  EXPECT_EQ(config_error_key(MaskingConfig{}, vocab), "<no error>");
  EXPECT_EQ(config_error_key(with([](auto& c) { c.mlm_probability = 0; }), vocab),
            "masking.mlm_probability");
  EXPECT_EQ(config_error_key(with([](auto& c) { c.mlm_probability = 1.5; }), vocab),
            "masking.mlm_probability");
  EXPECT_EQ(config_error_key(with([](auto& c) { c.mask_replace_prob = -0.1; }), vocab),
            "masking.mask_replace_prob");
  EXPECT_EQ(config_error_key(with([](auto& c) { c.random_replace_prob = 1.1; }), vocab),
            "masking.random_replace_prob");
  EXPECT_EQ(config_error_key(with([](auto& c) {
                               c.mask_replace_prob = 0.8;
                               c.random_replace_prob = 0.3;
                             }),
                             vocab),
            "masking.mask_replace_prob");  // the loader's key for the sum (config/validate.cpp)
  EXPECT_EQ(config_error_key(with([](auto& c) { c.max_predictions_per_seq = -1; }), vocab),
            "masking.max_predictions_per_seq");
  EXPECT_EQ(config_error_key(with([](auto& c) { c.span_p = 0; }), vocab), "masking.span_p");
  EXPECT_EQ(config_error_key(with([](auto& c) { c.max_span = 0; }), vocab), "masking.max_span");
  EXPECT_EQ(config_error_key(MaskingConfig{}, vocab, 0), "data.seq_len");
}

TEST(MaskingCollatorConfig, AllSpecialVocabularyIsAConfigError) {
  auto vocab = make_vocab(5);  // only [PAD] [UNK] [CLS] [SEP] [MASK]
  EXPECT_THROW(MaskingCollator(MaskingConfig{}, vocab, 128, Objective::mlm), ConfigError);
  vocab = make_vocab();
  std::fill(vocab.is_special.begin(), vocab.is_special.end(), 1);
  EXPECT_THROW(MaskingCollator(MaskingConfig{}, vocab, 128, Objective::mlm), ConfigError);
}

TEST(MaskingCollatorConfig, VocabTablesMustAgreeWithItsSize) {
  auto vocab = make_vocab();
  vocab.is_special.pop_back();
  EXPECT_THROW(MaskingCollator(MaskingConfig{}, vocab, 128, Objective::mlm), ConfigError);
  vocab = make_vocab();
  vocab.starts_word.push_back(1);
  EXPECT_THROW(MaskingCollator(MaskingConfig{}, vocab, 128, Objective::mlm), ConfigError);
  vocab = make_vocab();
  vocab.ids.mask = kVocabSize;
  EXPECT_THROW(MaskingCollator(MaskingConfig{}, vocab, 128, Objective::mlm), ConfigError);
}

TEST(MaskingCollatorInput, UpstreamBugsAreInvalidArgument) {
  const MaskingCollator collate(MaskingConfig{}, make_vocab(), 16, Objective::nsp);
  auto good = make_sequences(1, 16, 1).front();
  EXPECT_NO_THROW(collate({good}, 0));

  auto too_long = good;
  too_long.ids.assign(17, 10);
  too_long.token_type_ids.assign(17, 0);
  EXPECT_THROW(collate({too_long}, 0), std::invalid_argument);

  auto types = good;
  types.token_type_ids.pop_back();
  EXPECT_THROW(collate({types}, 0), std::invalid_argument);

  auto bad_id = good;
  bad_id.ids[1] = kVocabSize;
  EXPECT_THROW(collate({bad_id}, 0), std::invalid_argument);
  bad_id.ids[1] = -1;
  EXPECT_THROW(collate({bad_id}, 0), std::invalid_argument);

  auto no_label = good;
  no_label.nsp_label = -1;
  EXPECT_THROW(collate({no_label}, 0), std::invalid_argument);
  // Without NSP/SOP the label is not needed.
  const MaskingCollator mlm_only(MaskingConfig{}, make_vocab(), 16, Objective::mlm);
  EXPECT_NO_THROW(mlm_only({no_label}, 0));
}

// ---- layout -----------------------------------------------------------------------------

TEST(MaskingCollatorLayout, PadsCopiesTypesAndPassesSentenceLabels) {
  const int64_t seq_len = 12;
  const MaskingCollator collate(MaskingConfig{}, make_vocab(), seq_len, Objective::sop);
  data::PackedSequence a;
  a.ids = {2, 10, 11, 3, 12, 13, 3};
  a.token_type_ids = {0, 0, 0, 0, 1, 1, 1};
  a.nsp_label = 1;
  a.sample_id = 5;
  data::PackedSequence b;
  b.ids = {2, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 3};  // exactly seq_len
  b.token_type_ids.assign(b.ids.size(), 0);
  b.nsp_label = 0;
  b.sample_id = 6;
  const MaskedBatch batch = collate({a, b}, 9);
  ASSERT_EQ(batch.batch_size, 2);
  ASSERT_EQ(batch.seq_len, seq_len);
  ASSERT_EQ(batch.input_ids.size(), 2u * seq_len);
  EXPECT_EQ(batch.nsp_labels, (std::vector<int64_t>{1, 0}));
  for (int64_t s = 0; s < seq_len; ++s) {
    const bool real = s < 7;
    EXPECT_EQ(batch.attention_mask[s], real ? 1 : 0) << s;
    EXPECT_EQ(batch.token_type_ids[s], real ? a.token_type_ids[s] : 0) << s;
    if (!real) {
      EXPECT_EQ(batch.input_ids[s], 0) << "padding must be [PAD]";
      EXPECT_EQ(batch.labels[s], -100);
    }
    EXPECT_EQ(batch.attention_mask[seq_len + s], 1);
  }
  EXPECT_TRUE(batch.has_padding());
  // Exact count: 5 maskable in a -> round(0.75) -> at least 1; 10 in b -> 1 or 2.
  EXPECT_GE(selected_in_row(batch, 0), 1);
  EXPECT_LE(selected_in_row(batch, 0), 1);
  EXPECT_GE(selected_in_row(batch, 1), 1);
  EXPECT_LE(selected_in_row(batch, 1), 2);

  const MaskingCollator mlm_only(MaskingConfig{}, make_vocab(), seq_len, Objective::mlm);
  EXPECT_TRUE(mlm_only({a, b}, 9).nsp_labels.empty());
}

TEST(MaskingCollatorLayout, NothingMaskableGivesNoLabelsAndAValidBatch) {
  for (auto strategy : {MaskingStrategy::token, MaskingStrategy::whole_word,
                        MaskingStrategy::span}) {
    for (auto count : {MaskCount::exact, MaskCount::bernoulli}) {
      const MaskingCollator collate(config_for(strategy, count), make_vocab(), 8, Objective::mlm);
      data::PackedSequence only_specials;
      only_specials.ids = {2, 1, 1, 3};  // [CLS] [UNK] [UNK] [SEP]
      only_specials.token_type_ids.assign(4, 0);
      data::PackedSequence empty;
      const MaskedBatch batch = collate({only_specials, empty}, 1);
      EXPECT_EQ(batch.num_masked(), 0);
      EXPECT_TRUE(std::all_of(batch.labels.begin(), batch.labels.end(),
                              [](int64_t l) { return l == -100; }));
      EXPECT_EQ(batch.input_ids[1], 1) << "specials are never corrupted";
      EXPECT_EQ(batch.attention_mask[4 + 8], 0) << "an empty sequence is all padding";
    }
  }
  const MaskingCollator collate(MaskingConfig{}, make_vocab(), 8, Objective::mlm);
  const MaskedBatch none = collate({}, 1);
  EXPECT_EQ(none.batch_size, 0);
  EXPECT_EQ(none.num_masked(), 0);
}

// ---- invariants for every strategy and count mode ------------------------------------------

struct Mode {
  MaskingStrategy strategy;
  MaskCount count;
};

class MaskingInvariants : public ::testing::TestWithParam<Mode> {};

TEST_P(MaskingInvariants, SpecialsAndPaddingNeverSelectedLabelsExactlyAtSelected) {
  const auto vocab = make_vocab();
  auto cfg = config_for(GetParam().strategy, GetParam().count);
  cfg.mlm_probability = 0.4;
  const int64_t seq_len = 64;
  const MaskingCollator collate(cfg, vocab, seq_len, Objective::mlm);
  const auto seqs = make_sequences(300, seq_len, 11);
  const MaskedBatch batch = collate(seqs, 77);

  std::vector<int64_t> expected_positions;
  for (size_t r = 0; r < seqs.size(); ++r) {
    const auto& seq = seqs[r];
    for (int64_t s = 0; s < seq_len; ++s) {
      const int64_t cell = static_cast<int64_t>(r) * seq_len + s;
      const int64_t label = batch.labels[cell];
      const int64_t input = batch.input_ids[cell];
      if (s >= static_cast<int64_t>(seq.ids.size())) {
        ASSERT_EQ(label, -100) << "padding selected at " << cell;
        ASSERT_EQ(input, vocab.ids.pad);
        continue;
      }
      const int32_t original = seq.ids[s];
      if (vocab.is_special[original]) {
        ASSERT_EQ(label, -100) << "special token selected at " << cell;
        ASSERT_EQ(input, original) << "special token changed at " << cell;
        continue;
      }
      if (label == -100) {
        ASSERT_EQ(input, original) << "unselected position changed at " << cell;
      } else {
        ASSERT_EQ(label, original) << "label is not the original id at " << cell;
        expected_positions.push_back(cell);
        ASSERT_TRUE(input == vocab.ids.mask || !vocab.is_special[input])
            << "random replacement " << input << " is special at " << cell;
      }
    }
  }
  EXPECT_EQ(batch.masked_positions, expected_positions);  // ascending flat indices
  EXPECT_GT(batch.num_masked(), 0);
}

TEST_P(MaskingInvariants, DeterministicPerSampleIdAndDynamicAcrossSampleIds) {
  const auto cfg = config_for(GetParam().strategy, GetParam().count);
  const MaskingCollator collate(cfg, make_vocab(), 128, Objective::nsp);
  const auto seqs = make_sequences(8, 128, 3);
  expect_same_batch(collate(seqs, 42), collate(seqs, 42));

  // The same text under another sample_id (another epoch) gets another mask.
  auto later = seqs;
  for (auto& s : later) s.sample_id += 1000;
  const MaskedBatch first = collate(seqs, 42), second = collate(later, 42);
  EXPECT_EQ(first.attention_mask, second.attention_mask);
  EXPECT_NE(first.masked_positions, second.masked_positions);
  for (int64_t r = 0; r < first.batch_size; ++r) {
    std::vector<int64_t> a(first.labels.begin() + r * 128, first.labels.begin() + (r + 1) * 128);
    std::vector<int64_t> b(second.labels.begin() + r * 128,
                           second.labels.begin() + (r + 1) * 128);
    EXPECT_NE(a, b) << "row " << r << " got the same mask under another sample_id";
  }
  // Another seed too.
  EXPECT_NE(collate(seqs, 43).masked_positions, first.masked_positions);
}

TEST_P(MaskingInvariants, ARowDependsOnlyOnItsSequence) {
  const auto cfg = config_for(GetParam().strategy, GetParam().count);
  const MaskingCollator collate(cfg, make_vocab(), 128, Objective::mlm);
  const auto seqs = make_sequences(3, 128, 5);
  const MaskedBatch all = collate(seqs, 8);
  const MaskedBatch alone = collate({seqs[2]}, 8);
  const auto row = [](const std::vector<int64_t>& v, int64_t r) {
    return std::vector<int64_t>(v.begin() + r * 128, v.begin() + (r + 1) * 128);
  };
  EXPECT_EQ(row(all.input_ids, 2), row(alone.input_ids, 0));
  EXPECT_EQ(row(all.labels, 2), row(alone.labels, 0));
}

TEST_P(MaskingInvariants, SelectReportsExactlyTheSelectedPositions) {
  const auto cfg = config_for(GetParam().strategy, GetParam().count);
  const MaskingCollator collate(cfg, make_vocab(), 128, Objective::mlm);
  const auto seqs = make_sequences(50, 128, 6);
  const MaskedBatch batch = collate(seqs, 21);
  for (size_t r = 0; r < seqs.size(); ++r) {
    std::vector<int64_t> from_select;
    int32_t previous_end = 0;
    for (const MaskedSpan& span : collate.select(seqs[r], 21)) {
      ASSERT_GE(span.begin, previous_end) << "spans overlap or are out of order";
      ASSERT_LT(span.begin, span.end);
      previous_end = span.end;
      for (int32_t p = span.begin; p < span.end; ++p) {
        from_select.push_back(static_cast<int64_t>(r) * 128 + p);
      }
    }
    std::vector<int64_t> from_batch;
    for (int64_t c : batch.masked_positions) {
      if (c / 128 == static_cast<int64_t>(r)) from_batch.push_back(c);
    }
    ASSERT_EQ(from_select, from_batch) << "row " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllModes, MaskingInvariants,
    ::testing::Values(Mode{MaskingStrategy::token, MaskCount::exact},
                      Mode{MaskingStrategy::token, MaskCount::bernoulli},
                      Mode{MaskingStrategy::whole_word, MaskCount::exact},
                      Mode{MaskingStrategy::whole_word, MaskCount::bernoulli},
                      Mode{MaskingStrategy::span, MaskCount::exact},
                      Mode{MaskingStrategy::span, MaskCount::bernoulli}),
    [](const auto& info) {
      return std::string(config::to_string(info.param.strategy)) + "_" +
             std::string(config::to_string(info.param.count));
    });

// ---- words ------------------------------------------------------------------------------

TEST(FindMaskable, WordsStartAtTheMarkerOrARunStartAndNeverCrossSpecials) {
  const auto vocab = make_vocab();
  // 10 starts, 12 continues, 13 starts, 1 = [UNK] special, 15 continues (run start), 3 [SEP]
  const std::vector<int32_t> ids = {2, 10, 12, 13, 1, 15, 12, 3, 0};
  const MaskableSequence seq = find_maskable(ids, vocab);
  EXPECT_EQ(seq.positions, (std::vector<int32_t>{1, 2, 3, 5, 6}));
  ASSERT_EQ(seq.words.size(), 3u);
  EXPECT_EQ(seq.words[0].begin, 1);
  EXPECT_EQ(seq.words[0].end, 3);
  EXPECT_EQ(seq.words[1].begin, 3);
  EXPECT_EQ(seq.words[1].end, 4);
  EXPECT_EQ(seq.words[2].begin, 5);
  EXPECT_EQ(seq.words[2].end, 7);
  EXPECT_EQ(seq.words[0].run, seq.words[1].run);
  EXPECT_NE(seq.words[1].run, seq.words[2].run);
}

}  // namespace
}  // namespace mlm::masking

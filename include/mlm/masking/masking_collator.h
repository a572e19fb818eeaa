#pragma once
// Turns packed sequences into a masked training batch (dynamic masking, RoBERTa style).
//
// A pure function of (sequences, seed): sequence r is masked with its own generator keyed by
// (seed, sequences[r].sample_id), so its mask depends neither on its place in the batch nor on
// its neighbours; a resumed run masks exactly as the uninterrupted one, evaluation with a fixed
// seed is comparable across checkpoints, and the same text seen again under another sample_id
// (another epoch) gets a fresh mask.
//
// Per sequence: select positions (selection.h: maskable = neither special nor [PAD]; count
// exact or bernoulli; strategy token, whole_word or span), then corrupt each selected position:
// mask_replace_prob -> [MASK], random_replace_prob -> a token drawn uniformly from the
// non-special vocabulary, otherwise kept. token and whole_word decide per position (as BERT's
// and Hugging Face's whole-word masking do); span decides once per span, as SpanBERT does, so
// a span is all [MASK], all random or all kept. labels hold the original id at every selected
// position and -100 elsewhere.
#include <cstdint>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/config/sections/masking.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/masking/masked_batch.h"
#include "mlm/masking/selection.h"
#include "mlm/masking/span_length.h"
#include "mlm/text/vocab_info.h"

namespace mlm::masking {

class MaskingCollator {
 public:
  /// Throws ConfigError (naming the key) for out-of-range masking settings or seq_len, for a
  /// VocabInfo whose tables disagree with its size or whose special ids are out of range, and
  /// for a vocabulary in which every token is special (nothing to predict or to draw).
  /// with_document_ids: fill MaskedBatch::document_ids from each sequence's document_starts
  /// (model.attend_across_documents: false); otherwise they cost nothing.
  MaskingCollator(const config::MaskingConfig& cfg, const text::VocabInfo& vocab,
                  int64_t seq_len, config::Objective objective, bool with_document_ids = false);

  /// Pads every sequence to seq_len with [PAD] (attention 0). A sequence longer than seq_len,
  /// with token types of another length, an id outside the vocabulary, document starts not
  /// ascending inside it, or (NSP/SOP) a missing sentence label is a bug upstream:
  /// std::invalid_argument naming the sample.
  MaskedBatch operator()(const std::vector<data::PackedSequence>& sequences,
                         uint64_t seed) const;

  /// The groups of positions operator() selects for `sequence` under `seed` (the same draws),
  /// ascending: for tests and for showing the masking (mlm-data --json).
  std::vector<MaskedSpan> select(const data::PackedSequence& sequence, uint64_t seed) const;

  int64_t seq_len() const { return seq_len_; }
  /// The masking rate (share of maskable tokens selected) from now on, in (0, 1]
  /// (masking.rate_schedule).
  void set_masking_rate(double p) { cfg_.mlm_probability = p; }
  const config::MaskingConfig& config() const { return cfg_; }

 private:
  void check_sequence(const data::PackedSequence& sequence) const;
  std::vector<MaskedSpan> select_with(const data::PackedSequence& sequence,
                                      MaskingRng& rng) const;
  int32_t random_token(MaskingRng& rng) const;

  config::MaskingConfig cfg_;
  text::VocabInfo vocab_;
  int64_t seq_len_;
  config::Objective objective_;
  bool with_document_ids_;
  SpanLengthDistribution span_lengths_;
  std::vector<int32_t> non_special_ids_;  // the random-replacement pool
};

}  // namespace mlm::masking

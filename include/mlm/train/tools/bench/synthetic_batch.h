#pragma once
// A masked batch of random token ids, for measuring the training step without a corpus or a
// tokenizer: the same shape and masking rate the real pipeline delivers, the same work for
// the model, built in microseconds.
#include <cstdint>

#include "mlm/config/run_config.h"
#include "mlm/masking/masked_batch.h"
#include "mlm/text/vocab_info.h"

namespace mlm::train::bench {

/// [batch, seq_len] ids drawn uniformly from the non-special ids (>= 5, the fixed special
/// ids of text::SpecialIds), no padding, masked by the real collator
/// (masking/masking_collator.h) with `masking` (strategy, count, cap, 80/10/10) and `seed`,
/// row r as sample r: masked as the pipeline's batches are (the eager-PyTorch peer selects
/// each position independently with mlm_probability: the same rate in expectation).
/// Deterministic from `seed`. Throws ConfigError when the vocabulary has no non-special id,
/// the shape is empty, or the masking settings are out of range.
masking::MaskedBatch make_synthetic_batch(int64_t batch, int64_t seq_len, int64_t vocab_size,
                                          const config::MaskingConfig& masking, uint64_t seed);

/// The VocabInfo of a synthetic vocabulary of `vocab_size` ids: the five special ids of
/// text::SpecialIds, every other id a word start.
text::VocabInfo synthetic_vocab(int64_t vocab_size);

}  // namespace mlm::train::bench

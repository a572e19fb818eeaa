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
/// ids of text::SpecialIds), no padding. Each position is selected independently with
/// probability masking.mlm_probability (as the eager-PyTorch peer selects) and corrupted
/// 80/10/10 by masking.mask_replace_prob / random_replace_prob. Deterministic from `seed`.
/// Throws ConfigError when the vocabulary has no non-special id or the shape is empty.
masking::MaskedBatch make_synthetic_batch(int64_t batch, int64_t seq_len, int64_t vocab_size,
                                          const config::MaskingConfig& masking, uint64_t seed);

/// The VocabInfo of a synthetic vocabulary of `vocab_size` ids: the five special ids of
/// text::SpecialIds, every other id a word start.
text::VocabInfo synthetic_vocab(int64_t vocab_size);

}  // namespace mlm::train::bench

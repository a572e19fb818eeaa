#pragma once
// Batch-size warmup (train.batch_warmup_tokens, as ModernBERT and Cramming train): the global
// batch grows linearly in the tokens seen, from train.batch_warmup_start sequences per step to
// the full micro_batch_size x grad_accum_steps x ranks, in whole micro-batches per rank. The
// step's loss is divided by its own masked count, so a short step is exactly a small batch.
// A pure function of the run's tokens seen (all ranks, restored by a resume), so every rank
// and a resumed run take the same number of micro-batches at every step.
#include <cstdint>

#include "mlm/config/sections/train.h"

namespace mlm::train {

class BatchRamp {
 public:
  /// ConfigError naming train.batch_warmup_start when it is not a multiple of
  /// micro_batch_size x `world_size` (every rank adds its micro-batches together).
  BatchRamp(const config::TrainConfig& train, int world_size);

  /// The micro-batches each rank trains in a step that starts after `tokens_seen` tokens.
  int64_t micro_batches(int64_t tokens_seen) const;

 private:
  int64_t warmup_tokens_, start_, full_;  // start_ and full_ in micro-batches per rank
};

}  // namespace mlm::train

#include "mlm/train/loop/batch_ramp.h"

#include <algorithm>
#include <string>

#include "mlm/util/errors.h"

namespace mlm::train {

BatchRamp::BatchRamp(const config::TrainConfig& train, int world_size)
    : warmup_tokens_(train.batch_warmup_tokens), full_(train.grad_accum_steps) {
  start_ = full_;
  if (warmup_tokens_ == 0) return;
  const int64_t step_micro_batches = train.micro_batch_size * world_size;
  if (train.batch_warmup_start % step_micro_batches != 0) {
    throw ConfigError("train.batch_warmup_start (" + std::to_string(train.batch_warmup_start) +
                          ") must be a multiple of train.micro_batch_size x ranks (" +
                          std::to_string(train.micro_batch_size) + " x " + std::to_string(world_size) +
                          " = " + std::to_string(step_micro_batches) +
                          "): every rank adds whole micro-batches at once",
                      "train.batch_warmup_start");
  }
  start_ = std::max<int64_t>(train.batch_warmup_start / step_micro_batches, 1);
}

int64_t BatchRamp::micro_batches(int64_t tokens_seen) const {
  if (warmup_tokens_ == 0 || tokens_seen >= warmup_tokens_) return full_;
  // start + (full - start) x progress, rounded down to whole micro-batches (integers only, so
  // every rank and every resume agree).
  const auto grown = static_cast<int64_t>((static_cast<__int128>(full_ - start_) * tokens_seen) / warmup_tokens_);
  return std::min(full_, start_ + grown);
}

}  // namespace mlm::train

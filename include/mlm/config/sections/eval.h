#pragma once
// The eval.* section: how often and on how much of the valid split the model is scored.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>

namespace mlm::config {

struct EvalConfig {
  int64_t every_steps = 1000;              // 0 = only at the end
  int64_t max_batches = 100;               // bound on the cost of one evaluation (0 = all)
  int64_t batch_size = 0;                  // 0 = train.micro_batch_size
  int64_t seed = 1234;                     // fixed masking seed: comparable across checkpoints

  template <class V>
  void visit(V& v) {
    v("every_steps", every_steps);
    v("max_batches", max_batches);
    v("batch_size", batch_size);
    v("seed", seed);
  }
};

}  // namespace mlm::config

#pragma once
// The checkpoint.* section: how often checkpoints are written and how many are kept.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>

namespace mlm::config {

struct CheckpointConfig {
  int64_t every_steps = 1000;              // 0 = only at the end and on a signal
  int64_t keep_last = 3;                   // complete checkpoints kept (0 = all)

  template <class V>
  void visit(V& v) {
    v("every_steps", every_steps);
    v("keep_last", keep_last);
  }
};

}  // namespace mlm::config

#pragma once
// The logging.* section: log level, log and metrics rows, progress bar.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>

#include "mlm/config/enums.h"

namespace mlm::config {

struct LoggingConfig {
  std::string level = "info";              // trace | debug | info | warn | error (MLM_LOG_LEVEL wins)
  int64_t every_steps = 10;                // a log line and a metrics.jsonl row
  ProgressBar progress_bar = ProgressBar::auto_detect;  // auto (when stderr is a tty) | on | off
  bool tensorboard = false;                // metrics.jsonl's scalars also as a TensorBoard
                                           // event file in the run directory

  template <class V>
  void visit(V& v) {
    v("level", level);
    v("every_steps", every_steps);
    v("progress_bar", progress_bar);
    v("tensorboard", tensorboard);
  }
};

}  // namespace mlm::config

#pragma once
// The train.* section: the run: its directory, stop conditions, batch, device, seed and resume.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>

#include "mlm/config/enums.h"

namespace mlm::config {

struct TrainConfig {
  std::string output_dir = "runs/base";    // run directory (config, metrics, checkpoints)
  int64_t max_steps = 100000;              // optimizer steps (0 = no step limit)
  int64_t max_tokens = 0;                  // stop after this many tokens (0 = no limit)
  double max_time_s = 0;                   // stop after this wall-clock time (0 = no limit)
  int64_t micro_batch_size = 32;           // sequences per forward/backward
  int64_t grad_accum_steps = 1;            // micro-batches per optimizer step
  int64_t batch_warmup_tokens = 0;         // batch-size warmup: the global batch grows
                                           // linearly in the tokens seen, over this many
                                           // (0 = off), in whole micro-batches
  int64_t batch_warmup_start = 0;          // ... from this many sequences per step (all
                                           // ranks; a multiple of micro_batch_size x ranks)
  Precision precision = Precision::auto_detect;  // auto | fp32 | bf16 | fp16 (autocast, fp32
                                                 //   master weights; fp16 with loss scaling)
  double loss_scale_init = 65536;          // fp16: the dynamic loss scale's first value
  int64_t loss_scale_growth_interval = 2000;  // fp16: steps without overflow before it doubles
  DeviceKind device = DeviceKind::auto_detect;  // auto | cpu | cuda
  int64_t threads = 0;                     // intra-op threads (0 = this process's share of the cores)
  int64_t seed = 42;                       // model init, data order and masking
  int64_t max_skipped_steps = 10;          // consecutive non-finite steps before giving up
  std::string resume;                      // "" new run | auto | latest | a checkpoint dir
  double ema_decay = 0;                    // EMA of the weights (fp32 shadow): 0 = off, else
                                           //   in (0, 1); per update shadow <- d^N shadow +
                                           //   (1 - d^N) weights, N = ema_every_steps
  int64_t ema_every_steps = 1;             // update the EMA every N optimizer steps
  int64_t ema_start_step = 0;              // the EMA starts as a copy of the weights at this
                                           //   step (0: the initial weights)

  template <class V>
  void visit(V& v) {
    v("output_dir", output_dir);
    v("max_steps", max_steps);
    v("max_tokens", max_tokens);
    v("max_time_s", max_time_s);
    v("micro_batch_size", micro_batch_size);
    v("grad_accum_steps", grad_accum_steps);
    v("batch_warmup_tokens", batch_warmup_tokens);
    v("batch_warmup_start", batch_warmup_start);
    v("precision", precision);
    v("loss_scale_init", loss_scale_init);
    v("loss_scale_growth_interval", loss_scale_growth_interval);
    v("device", device);
    v("threads", threads);
    v("seed", seed);
    v("max_skipped_steps", max_skipped_steps);
    v("resume", resume);
    v("ema_decay", ema_decay);
    v("ema_every_steps", ema_every_steps);
    v("ema_start_step", ema_start_step);
  }
};

}  // namespace mlm::config

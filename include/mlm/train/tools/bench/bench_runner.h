#pragma once
// mlm-bench's engine: the trainer's own step (training_step.h) on one process, timed part by
// part at the configured shape, with the model-FLOPs utilisation against a peak measured in
// the same process.
#include <cstdint>
#include <string>

#include "mlm/config/run_config.h"

namespace mlm::train::bench {

struct BenchOptions {
  int64_t steps = 10;       // timed steps
  int64_t warmup = 8;       // untimed steps first (allocator, oneDNN primitive caches): one
                            // pass over the synthetic ring, whose masked counts differ
  bool real_data = false;   // tokenizer + StreamingDataset + MaskingCollator instead of
                            // synthetic ids (the corpus and tokenizer of the config)
  int peak_repeats = 5;     // products for the peak (2048³ on CPU, 8192³ on CUDA)
  std::string profile_trace;  // non-empty: the timed steps under LibTorch's profiler, saved
                              // there as a Chrome trace
};

/// Seconds are means per timed step. tokens_per_s counts non-padding tokens.
struct BenchResult {
  int64_t steps = 0;
  double tokens_per_s = 0;
  double step_s = 0;
  double data_s = 0;       // the step's batches (the pipeline's share; ~0 when synthetic)
  double forward_s = 0;    // tensors, autocast forward, loss, the loss/accuracy read-back
  double backward_s = 0;
  double optimizer_s = 0;  // gradient reduction (none on one rank), clipping, AdamW
  double cpu_s = 0;        // process CPU time per step: cpu_s / step_s well below `threads`
                           // means the machine was oversubscribed while measuring
  double tokens_per_step = 0;
  double masked_per_step = 0;
  double loss = 0;         // mean MLM loss of the timed steps
  double train_flops_per_token = 0;
  double peak_gflops = 0;
  double mfu = 0;
  double peak_rss_mb = 0;
  int64_t params = 0;
  std::string precision;   // fp32 | bf16
  std::string device;      // cpu | cuda:N
  bool real_data = false;
  int64_t batch = 0, seq_len = 0, layers = 0, hidden = 0, vocab = 0, threads = 0;
};

/// Builds everything from `config` (train.device, train.threads, train.precision,
/// train.micro_batch_size, train.grad_accum_steps, data.seq_len, masking.*, optim.*, model.*)
/// and runs warmup + steps training steps. ConfigError / DataError as the trainer would throw them.
BenchResult run_benchmark(const config::RunConfig& config, const BenchOptions& options);

}  // namespace mlm::train::bench

#pragma once
// mlm-bench's engine: the trainer's own step (training_step.h) on one process, timed part by
// part at the configured shape, with the model-FLOPs utilisation against a peak measured in
// the same process or given (one measurement shared with the PyTorch peers); and the peak
// measurement alone (peak_flops.h).
#include <cstdint>
#include <string>

#include "mlm/config/run_config.h"
#include "mlm/train/tools/bench/peak_flops.h"

namespace mlm::train::bench {

struct BenchOptions {
  int64_t steps = 10;       // timed steps
  int64_t warmup = 8;       // untimed steps first (allocator, oneDNN primitive caches): one
                            // pass over the synthetic ring, whose masked counts differ
  bool real_data = false;   // tokenizer + StreamingDataset + MaskingCollator instead of
                            // synthetic ids (the corpus and tokenizer of the config)
  int peak_repeats = 5;     // timed samples per product for the peak, the best counts
  double peak_gflops = 0;   // > 0: MFU against this peak (measured once, shared with the
                            // peers: mlm-bench --peak-only); 0: measure the square in-process
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
  std::string peak_source;  // "shared" (BenchOptions::peak_gflops) | "in-process"
  double mfu = 0;
  double peak_rss_mb = 0;
  double peak_device_mb = 0;  // CUDA: the allocator's peak of tensor memory (0 on the CPU)
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

/// mlm-bench --peak-only: the peaks of the config's precision on its device under its thread
/// count (the same set-up as run_benchmark), at the square and at the step's products
/// (model_gemm_shapes, on the synthetic vocabulary: model.vocab_size, else
/// tokenizer.vocab_size).
struct PeakReport {
  PeakMeasurement peak;
  int64_t batch = 0, seq_len = 0, layers = 0, hidden = 0, vocab = 0, vocab_rows = 0;
  double train_flops_per_token = 0;
  double products_share = 0;  // the products' FLOPs over the step's model FLOPs (the MFU
                              // count): the rest is attention's S x S products and the head
                              // parts the products leave out
};

PeakReport run_peak_benchmark(const config::RunConfig& config, const BenchOptions& options);

}  // namespace mlm::train::bench

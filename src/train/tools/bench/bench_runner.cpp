#include "mlm/train/tools/bench/bench_runner.h"

#include <sys/resource.h>
#include <time.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include <cmath>
#include <memory>
#include <optional>

#include "mlm/masking/batch_stream.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/optim/ema_weights.h"
#include "mlm/train/loop/training_step.h"
#include "mlm/train/run/bootstrap.h"
#include "mlm/train/run/device.h"
#include "mlm/train/tools/bench/model_flops.h"
#include "mlm/train/tools/bench/peak_flops.h"
#include "mlm/train/tools/bench/synthetic_batch.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"

namespace mlm::train::bench {
namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
}

/// Where a step's batches come from: the real pipeline (the trainer's BatchStream over the
/// config's corpus and tokenizer) or a ring of synthetic batches built up front, so the timed
/// loop measures the step and not the random draws.
class BatchSource {
 public:
  BatchSource(const config::RunConfig& config, const Process& process, bool real_data)
      : accum_(config.train.grad_accum_steps) {
    if (real_data) {
      tokenizer_.emplace(open_tokenizer(config, *process.comm));
      stream_ = std::make_unique<masking::BatchStream>(config::resolve_data_plan(config),
                                                       *tokenizer_, data::Split::train);
      vocab_ = tokenizer_->vocab();
      return;
    }
    vocab_ = synthetic_vocab(config.model.vocab_size > 0 ? config.model.vocab_size
                                                         : config.tokenizer.vocab_size);
    // A few distinct batches, so the masked count varies from step to step as with real data.
    for (uint64_t i = 0; i < kRing; ++i) {
      ring_.push_back(make_synthetic_batch(config.train.micro_batch_size, config.data.seq_len,
                                           vocab_.size, config.masking,
                                           static_cast<uint64_t>(config.train.seed) + i));
    }
  }

  StepBatches next_step() {
    if (stream_) return collect_step(*stream_, accum_);
    std::vector<masking::MaskedBatch> batches;
    for (int64_t m = 0; m < accum_; ++m) batches.push_back(ring_[next_++ % ring_.size()]);
    return StepBatches(std::move(batches));
  }

  const text::VocabInfo& vocab() const { return vocab_; }

 private:
  static constexpr uint64_t kRing = 8;
  int64_t accum_;
  text::VocabInfo vocab_;
  std::optional<text::Tokenizer> tokenizer_;
  std::unique_ptr<masking::BatchStream> stream_;
  std::vector<masking::MaskedBatch> ring_;
  size_t next_ = 0;
};

/// LibTorch's profiler over a scope (CPU operators, with shapes), saved as a Chrome trace when
/// the scope ends; nothing when `trace` is empty.
class OperatorProfile {
 public:
  explicit OperatorProfile(std::string trace) : trace_(std::move(trace)) {
    if (trace_.empty()) return;
    namespace prof = torch::autograd::profiler;
    prof::ProfilerConfig settings(prof::ProfilerState::KINETO, /*report_input_shapes=*/true,
                                  /*profile_memory=*/false);
    prof::prepareProfiler(settings, {torch::profiler::impl::ActivityType::CPU});
    prof::enableProfiler(settings, {torch::profiler::impl::ActivityType::CPU});
  }
  ~OperatorProfile() {
    if (!trace_.empty()) torch::autograd::profiler::disableProfiler()->save(trace_);
  }
  OperatorProfile(const OperatorProfile&) = delete;
  OperatorProfile& operator=(const OperatorProfile&) = delete;

 private:
  std::string trace_;
};

void check_objective(const config::RunConfig& config) {
  if (config::trains_sentence_pairs(config.model.objective)) {
    throw ConfigError("mlm-bench measures the MLM and RTD objectives; set model.objective: mlm or rtd",
                      "model.objective");
  }
}

void check_peak_options(const BenchOptions& options) {
  if (options.peak_repeats < 1) {
    throw UsageError("--peak-repeats must be at least 1, got " + std::to_string(options.peak_repeats));
  }
  if (!std::isfinite(options.peak_gflops) || options.peak_gflops < 0) {
    throw UsageError("--peak-gflops must be a positive GFLOP/s rate, got " + std::to_string(options.peak_gflops));
  }
}

}  // namespace

BenchResult run_benchmark(const config::RunConfig& config, const BenchOptions& options) {
  if (options.steps < 1) throw UsageError("--steps must be at least 1, got " + std::to_string(options.steps));
  if (options.warmup < 0) throw UsageError("--warmup must be >= 0, got " + std::to_string(options.warmup));
  check_peak_options(options);
  check_objective(config);
  // One process, whatever the environment says: the step is measured on one rank.
  const auto process = bootstrap(config, Launch::single_process);
  auto source = std::make_unique<BatchSource>(config, process, options.real_data);
  auto model = build_model(config, source->vocab(), process.device);
  TrainingStep training(model, config, process.comm, process.compute_dtype);
  // The EMA's update (train.ema_decay) is part of the step: timed with the optimizer's.
  std::optional<EmaWeights> ema;
  if (config.train.ema_decay > 0) ema.emplace(model, config.train);

  StepTimes warm, timed;
  std::vector<DeviceStepStats> timed_stats;  // read after the timing, as the trainer reads
  // The trainer's step: the step's batches, then forward/backward and the update. The
  // learning rate does not change the work, so the configured peak serves every step.
  auto step = [&](int64_t i, StepTimes& times) {
    const auto start = SteadyClock::now();
    const auto batches = source->next_step();
    times.data += seconds_since(start);
    auto stats = training.run(i + 1, config.optim.learning_rate, batches, &times);
    if (ema) {
      const auto update_start = SteadyClock::now();
      ema->update(i + 1);
      if (process.device.is_cuda()) torch::cuda::synchronize();
      times.update += seconds_since(update_start);
    }
    return stats;
  };
  for (int64_t i = 0; i < options.warmup; ++i) step(i, warm);
  const double cpu_start = process_cpu_seconds();
  {
    const OperatorProfile profile(options.profile_trace);
    for (int64_t i = 0; i < options.steps; ++i) timed_stats.push_back(step(options.warmup + i, timed));
  }
  const double cpu_used = process_cpu_seconds() - cpu_start;
  StepStats sums;
  for (const auto& stats : read_steps(timed_stats)) {
    sums.tokens += stats.tokens;
    sums.num_masked += stats.num_masked;
    sums.loss += stats.loss;
  }

  BenchResult r;
  const double n = static_cast<double>(options.steps);
  r.steps = options.steps;
  r.data_s = timed.data / n;
  r.forward_s = timed.forward / n;
  r.backward_s = timed.backward / n;
  r.optimizer_s = timed.update / n;
  r.step_s = r.data_s + r.forward_s + r.backward_s + r.optimizer_s;
  r.cpu_s = cpu_used / n;
  r.tokens_per_step = static_cast<double>(sums.tokens) / n;
  r.masked_per_step = static_cast<double>(sums.num_masked) / n;
  r.tokens_per_s = r.step_s > 0 ? r.tokens_per_step / r.step_s : 0;
  r.loss = sums.loss / n;
  r.vocab = model->vocab_size();
  r.train_flops_per_token = train_flops_per_token(config.model, config.data.seq_len, r.vocab,
                                                  config.masking.mlm_probability);
  // Read before the peak measurement allocates its operands (as the peers read theirs).
  r.peak_device_mb = peak_device_memory_mb(process.device);
  // Stop the pipeline's worker threads first: still prefetching, they would share the cores
  // with the peak measurement (seen: 85 instead of 140 GFLOP/s, an MFU of 0.97).
  source.reset();
  if (options.peak_gflops > 0) {
    r.peak_gflops = options.peak_gflops;
    r.peak_source = "shared";
  } else {
    r.peak_gflops = measure_peak_gflops(process.compute_dtype, process.device, /*n=*/0, options.peak_repeats);
    r.peak_source = "in-process";
  }
  r.mfu = r.peak_gflops > 0 ? r.tokens_per_s * r.train_flops_per_token / (r.peak_gflops * 1e9) : 0;
  r.peak_rss_mb = peak_rss_mb();
  r.params = model::count_parameters(*model);
  r.precision = precision_name(process.compute_dtype);
  r.device = process.device.str();
  r.real_data = options.real_data;
  r.batch = config.train.micro_batch_size;
  r.seq_len = config.data.seq_len;
  r.layers = config.model.num_hidden_layers;
  r.hidden = config.model.hidden_size;
  r.threads = torch::get_num_threads();
  return r;
}

PeakReport run_peak_benchmark(const config::RunConfig& config, const BenchOptions& options) {
  check_peak_options(options);
  check_objective(config);
  // The process set-up of run_benchmark (device, threads, memory), so the peak is measured
  // under the thread count the step runs on.
  const auto process = bootstrap(config, Launch::single_process);
  PeakReport report;
  report.vocab = synthetic_vocab(config.model.vocab_size > 0 ? config.model.vocab_size : config.tokenizer.vocab_size).size;
  report.vocab_rows = padded_vocab_rows(config.model, report.vocab);
  const auto shapes = model_gemm_shapes(config, report.vocab_rows);
  report.peak = measure_peaks(shapes, process.compute_dtype, process.device, options.peak_repeats);
  report.batch = config.train.micro_batch_size;
  report.seq_len = config.data.seq_len;
  report.layers = config.model.num_hidden_layers;
  report.hidden = config.model.hidden_size;
  report.train_flops_per_token = train_flops_per_token(config.model, config.data.seq_len, report.vocab,
                                                       config.masking.mlm_probability);
  double product_flops = 0;
  for (const auto& shape : shapes) product_flops += shape.step_flops();
  const double step_tokens = static_cast<double>(report.batch * report.seq_len * config.train.grad_accum_steps);
  const double step_flops = report.train_flops_per_token * step_tokens;
  report.products_share = step_flops > 0 ? product_flops / step_flops : 0;
  return report;
}

}  // namespace mlm::train::bench

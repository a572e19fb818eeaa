#include "mlm/train/bench/bench_runner.h"

#include <sys/resource.h>
#include <time.h>
#include <torch/cuda.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include "mlm/data/streaming_dataset.h"
#include "mlm/masking/masking_collator.h"
#include "mlm/model/bert.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/autocast.h"
#include "mlm/train/batch_tensors.h"
#include "mlm/train/bench/model_flops.h"
#include "mlm/train/bench/peak_flops.h"
#include "mlm/train/bench/synthetic_batch.h"
#include "mlm/train/device.h"
#include "mlm/train/grad_clip.h"
#include "mlm/train/optimizer.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

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

/// Where batches come from: the real pipeline (which owns the tokenizer, the dataset and the
/// collator) or a ring of synthetic batches.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual masking::MaskedBatch next() = 0;
  virtual int64_t vocab_size() const = 0;
  virtual int64_t pad_id() const = 0;
};

class SyntheticSource : public BatchSource {
 public:
  explicit SyntheticSource(const config::RunConfig& config)
      : vocab_(config.model.vocab_size > 0 ? config.model.vocab_size : config.tokenizer.vocab_size) {
    // A few distinct batches, so the masked count varies from step to step as with real data;
    // built up front, so the timed loop measures the step and not the random draws.
    for (uint64_t i = 0; i < kRing; ++i) {
      ring_.push_back(make_synthetic_batch(config.train.micro_batch_size, config.data.seq_len,
                                           vocab_, config.masking,
                                           static_cast<uint64_t>(config.train.seed) + i));
    }
  }
  masking::MaskedBatch next() override { return ring_[next_++ % ring_.size()]; }
  int64_t vocab_size() const override { return vocab_; }
  int64_t pad_id() const override { return text::SpecialIds{}.pad; }

 private:
  static constexpr uint64_t kRing = 8;
  int64_t vocab_;
  std::vector<masking::MaskedBatch> ring_;
  size_t next_ = 0;
};

class PipelineSource : public BatchSource {
 public:
  explicit PipelineSource(const config::RunConfig& config)
      : config_(config), tokenizer_(text::ensure_tokenizer(config)) {
    const auto& vocab = tokenizer_.vocab();
    if (config.model.vocab_size > 0 && config.model.vocab_size != vocab.size) {
      throw ConfigError("model.vocab_size (" + std::to_string(config.model.vocab_size) +
                            ") differs from the tokenizer's " + std::to_string(vocab.size) +
                            " pieces (" + config.tokenizer.model + "); set 0 to take the tokenizer's size",
                        "model.vocab_size");
    }
    dataset_ = std::make_unique<data::StreamingDataset>(config, tokenizer_, data::Split::train);
    collator_ = std::make_unique<masking::MaskingCollator>(config.masking, vocab, config.data.seq_len,
                                                           config.model.objective);
  }
  masking::MaskedBatch next() override {
    rows_.clear();
    data::PackedSequence sequence;
    while (static_cast<int64_t>(rows_.size()) < config_.train.micro_batch_size && dataset_->next(sequence)) {
      rows_.push_back(std::move(sequence));
    }
    return (*collator_)(rows_, static_cast<uint64_t>(config_.train.seed));
  }
  int64_t vocab_size() const override { return tokenizer_.vocab().size; }
  int64_t pad_id() const override { return tokenizer_.vocab().ids.pad; }

 private:
  const config::RunConfig& config_;
  text::Tokenizer tokenizer_;
  std::unique_ptr<data::StreamingDataset> dataset_;
  std::unique_ptr<masking::MaskingCollator> collator_;
  std::vector<data::PackedSequence> rows_;
};

struct PhaseTimes {
  double data = 0, forward = 0, backward = 0, optimizer = 0;
  double tokens = 0, masked = 0, loss = 0;
};

}  // namespace

BenchResult run_benchmark(const config::RunConfig& config, const BenchOptions& options) {
  if (options.steps < 1) throw UsageError("--steps must be at least 1, got " + std::to_string(options.steps));
  if (options.warmup < 0) throw UsageError("--warmup must be >= 0, got " + std::to_string(options.warmup));
  if (config.model.objective != config::Objective::mlm) {
    throw ConfigError("mlm-bench measures the MLM objective; set model.objective: mlm", "model.objective");
  }
  const auto device = resolve_device(config.train.device);
  configure_threads(config.train.threads);
  configure_memory();
  const bool bf16 = use_bf16(config.train.precision, device);

  std::unique_ptr<BatchSource> source;
  if (options.real_data) {
    source = std::make_unique<PipelineSource>(config);
  } else {
    source = std::make_unique<SyntheticSource>(config);
  }

  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  model::BertForPreTraining model(config.model, source->vocab_size(), source->pad_id());
  model->to(device);
  model->train();
  auto optimizer = make_adamw(*model, config.optim);
  const auto groups = split_parameters(*model);
  std::vector<torch::Tensor> params = groups.decay;
  params.insert(params.end(), groups.no_decay.begin(), groups.no_decay.end());
  // The trainer sets the step's learning rate every step; the value does not change the work.
  set_learning_rate(*optimizer, config.optim.learning_rate);

  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  // One training step as Trainer::train_step runs it with one micro-batch and one rank.
  auto step = [&](PhaseTimes& t) {
    auto start = SteadyClock::now();
    const auto batch = source->next();
    const auto inputs = to_bert_inputs(batch, device);
    const double masked = std::max<double>(static_cast<double>(batch.num_masked()), 1.0);
    t.tokens += static_cast<double>(count_tokens(batch));
    t.masked += static_cast<double>(batch.num_masked());
    t.data += seconds_since(start);

    start = SteadyClock::now();
    model::BertOutput out;
    {
      AutocastScope autocast(bf16, device);
      out = model->forward(inputs);
    }
    auto loss = out.mlm_loss_sum / masked;
    t.loss += out.mlm_loss_sum.item<double>() / masked;  // the trainer reads both back
    (void)out.mlm_correct.item<int64_t>();
    t.forward += seconds_since(start);

    start = SteadyClock::now();
    loss.backward();
    sync();
    t.backward += seconds_since(start);

    start = SteadyClock::now();
    clip_grad_norm(params, config.optim.max_grad_norm);
    optimizer->step();
    optimizer->zero_grad();
    sync();
    t.optimizer += seconds_since(start);
  };

  optimizer->zero_grad();
  PhaseTimes warm;
  for (int64_t i = 0; i < options.warmup; ++i) step(warm);
  PhaseTimes timed;
  const double cpu_start = process_cpu_seconds();
  for (int64_t i = 0; i < options.steps; ++i) step(timed);
  const double cpu_used = process_cpu_seconds() - cpu_start;

  BenchResult r;
  const double n = static_cast<double>(options.steps);
  r.steps = options.steps;
  r.data_s = timed.data / n;
  r.forward_s = timed.forward / n;
  r.backward_s = timed.backward / n;
  r.optimizer_s = timed.optimizer / n;
  r.step_s = r.data_s + r.forward_s + r.backward_s + r.optimizer_s;
  r.cpu_s = cpu_used / n;
  r.tokens_per_step = timed.tokens / n;
  r.masked_per_step = timed.masked / n;
  r.tokens_per_s = r.step_s > 0 ? r.tokens_per_step / r.step_s : 0;
  r.loss = timed.loss / n;
  r.vocab = model->vocab_size();
  r.train_flops_per_token = train_flops_per_token(config.model, config.data.seq_len, r.vocab,
                                                  config.masking.mlm_probability);
  // Stop the pipeline's worker threads first: still prefetching, they would share the cores
  // with the peak measurement (seen: 85 instead of 140 GFLOP/s, an MFU of 0.97).
  source.reset();
  r.peak_gflops = measure_peak_gflops(bf16 ? torch::kBFloat16 : torch::kFloat32, device,
                                      /*n=*/0, options.peak_repeats);
  r.mfu = r.peak_gflops > 0 ? r.tokens_per_s * r.train_flops_per_token / (r.peak_gflops * 1e9) : 0;
  r.peak_rss_mb = peak_rss_mb();
  r.params = model::count_parameters(*model);
  r.precision = bf16 ? "bf16" : "fp32";
  r.device = device.str();
  r.real_data = options.real_data;
  r.batch = config.train.micro_batch_size;
  r.seq_len = config.data.seq_len;
  r.layers = config.model.num_hidden_layers;
  r.hidden = config.model.hidden_size;
  r.threads = torch::get_num_threads();
  return r;
}

}  // namespace mlm::train::bench

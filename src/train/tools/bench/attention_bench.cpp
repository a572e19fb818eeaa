#include "mlm/train/tools/bench/attention_bench.h"

#include <torch/cuda.h>

#include "mlm/model/architectures.h"
#include "mlm/train/loop/autocast.h"
#include "mlm/train/run/bootstrap.h"
#include "mlm/train/run/device.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"

namespace mlm::train::bench {
namespace {

struct LayerStepTimes {
  double forward = 0, total = 0;
};

void wait_for(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

}  // namespace

AttentionBenchResult run_attention_benchmark(const config::RunConfig& config, const BenchOptions& options) {
  const auto& spec = model::architecture_spec(config.model.architecture);
  if (!spec.disentangled_attention()) {
    throw ConfigError("mlm-bench --attention times DeBERTa's disentangled self-attention; set "
                      "model.architecture: deberta_v2",
                      "model.architecture");
  }
  if (options.steps < 1) throw UsageError("--steps must be at least 1, got " + std::to_string(options.steps));
  const auto process = bootstrap(config, Launch::single_process);
  const auto& device = process.device;
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  const auto attention = spec.attention_under_test(config.model);
  attention->module().to(device);
  attention->module().train();
  const int64_t batch = config.train.micro_batch_size, seq = config.data.seq_len, hidden = config.model.hidden_size;
  const auto x = torch::randn({batch, seq, hidden}, torch::TensorOptions().device(device)).requires_grad_();
  const auto upstream = torch::randn({batch, seq, hidden}, torch::TensorOptions().device(device));

  auto layer_step = [&](bool fused, LayerStepTimes& times) {
    const auto start = SteadyClock::now();
    torch::Tensor out;
    {
      const AutocastScope autocast(process.compute_dtype, device);
      out = attention->self_attention(x, fused);
    }
    wait_for(device);
    times.forward += seconds_since(start);
    (out.to(torch::kFloat32) * upstream).sum().backward();
    wait_for(device);
    times.total += seconds_since(start);
    x.mutable_grad().reset();
    attention->module().zero_grad();
  };
  LayerStepTimes warm, fused, composition;
  for (int64_t i = 0; i < options.warmup; ++i) {
    layer_step(true, warm);
    layer_step(false, warm);
  }
  for (int64_t i = 0; i < options.steps; ++i) {  // alternating: a drift in load hits both alike
    layer_step(true, fused);
    layer_step(false, composition);
  }

  AttentionBenchResult r;
  const double ms = 1e3 / static_cast<double>(options.steps);
  r.fused_ms = fused.total * ms;
  r.fused_forward_ms = fused.forward * ms;
  r.composition_ms = composition.total * ms;
  r.composition_forward_ms = composition.forward * ms;
  r.steps = options.steps;
  r.batch = batch;
  r.seq_len = seq;
  r.hidden = hidden;
  r.heads = config.model.num_attention_heads;
  r.relative_rows = attention->relative_rows();
  r.threads = torch::get_num_threads();
  r.precision = precision_name(process.compute_dtype);
  r.device = device.str();
  return r;
}

}  // namespace mlm::train::bench

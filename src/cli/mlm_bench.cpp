// mlm-bench: times full training steps (forward, backward, clipping, AdamW) at the configured
// shape and precision, on synthetic ids or (--data) the real pipeline, and reports tokens/s,
// the time split, MFU against a peak measured in the same run (or the one --peak-gflops
// gives), and peak memory. --peak-only measures that peak alone, at a square and at the
// step's own products, to be shared with the PyTorch peers.
// docs/PERFORMANCE.md holds the figures and scripts/bench_vs_pytorch.sh the comparison.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/common/cli_app.h"
#include "cli/common/libtorch_runtime.h"
#include "mlm/train/tools/bench/attention_bench.h"
#include "mlm/train/tools/bench/bench_runner.h"

namespace {

struct Options {
  mlm::cli::ConfigOptions config;
  mlm::train::bench::BenchOptions bench;
  bool json = false;
  bool peak_only = false;
  bool attention = false;
};

nlohmann::json to_json(const mlm::train::bench::BenchResult& r, const Options& options) {
  nlohmann::json json = {{"tokens_per_s", r.tokens_per_s},
                         {"step_s", r.step_s},
                         {"data_s", r.data_s},
                         {"forward_s", r.forward_s},
                         {"backward_s", r.backward_s},
                         {"optimizer_s", r.optimizer_s},
                         {"cpu_s", r.cpu_s},
                         {"mfu", r.mfu},
                         {"peak_gflops", r.peak_gflops},
                         {"peak_source", r.peak_source},
                         {"model_gflops_per_s", r.tokens_per_s * r.train_flops_per_token / 1e9},
                         {"peak_rss_mb", r.peak_rss_mb},
                         {"params", r.params},
                         {"precision", r.precision},
                         {"device", r.device},
                         {"batch", r.batch},
                         {"seq_len", r.seq_len},
                         {"layers", r.layers},
                         {"hidden", r.hidden},
                         {"vocab", r.vocab},
                         {"threads", r.threads},
                         {"steps", r.steps},
                         {"warmup", options.bench.warmup},
                         {"tokens_per_step", r.tokens_per_step},
                         {"masked_per_step", r.masked_per_step},
                         {"loss", r.loss},
                         {"data", r.real_data ? "pipeline" : "synthetic"}};
  // GPU memory under the peers' name (torch.cuda.max_memory_allocated), on CUDA only.
  if (r.device.starts_with("cuda")) json["peak_mem_mb"] = r.peak_device_mb;
  return json;
}

void print_text(const mlm::train::bench::BenchResult& r) {
  const auto share = [&](double s) { return r.step_s > 0 ? 100.0 * s / r.step_s : 0.0; };
  std::printf("mlm-bench: %lld layers, hidden %lld, vocab %lld, batch %lld x seq %lld, %s on %s, "
              "%lld threads, %s data, %lld params\n",
              static_cast<long long>(r.layers), static_cast<long long>(r.hidden),
              static_cast<long long>(r.vocab), static_cast<long long>(r.batch),
              static_cast<long long>(r.seq_len), r.precision.c_str(), r.device.c_str(),
              static_cast<long long>(r.threads), r.real_data ? "pipeline" : "synthetic",
              static_cast<long long>(r.params));
  std::printf("  %.1f tokens/s, %.4f s/step over %lld steps (loss %.4f)\n", r.tokens_per_s, r.step_s,
              static_cast<long long>(r.steps), r.loss);
  std::printf("  data %.4f s (%.1f%%) | forward %.4f s (%.1f%%) | backward %.4f s (%.1f%%) | "
              "optimizer %.4f s (%.1f%%)\n",
              r.data_s, share(r.data_s), r.forward_s, share(r.forward_s), r.backward_s,
              share(r.backward_s), r.optimizer_s, share(r.optimizer_s));
  std::printf("  CPU %.4f s/step (%.2f cores busy of %lld threads)\n", r.cpu_s,
              r.step_s > 0 ? r.cpu_s / r.step_s : 0.0, static_cast<long long>(r.threads));
  std::printf("  MFU %.3f (%.1f model GFLOP/s of a%s %.1f GFLOP/s %s peak) | peak RSS %.0f MB\n",
              r.mfu, r.tokens_per_s * r.train_flops_per_token / 1e9,
              r.peak_source == "shared" ? " given" : " measured", r.peak_gflops, r.precision.c_str(),
              r.peak_rss_mb);
  if (r.device.starts_with("cuda")) std::printf("  peak GPU memory %.0f MB (tensors)\n", r.peak_device_mb);
}

nlohmann::json to_json(const mlm::train::bench::PeakReport& report) {
  const auto& p = report.peak;
  auto shapes = nlohmann::json::array();
  for (const auto& rate : p.shapes) {
    shapes.push_back({{"name", rate.shape.name},
                      {"m", rate.shape.m},
                      {"k", rate.shape.k},
                      {"n", rate.shape.n},
                      {"per_step", rate.shape.per_step},
                      {"step_gflop", rate.shape.step_flops() / 1e9},
                      {"forward_gflops", rate.forward_gflops},
                      {"input_grad_gflops", rate.input_grad_gflops},
                      {"weight_grad_gflops", rate.weight_grad_gflops},
                      {"gflops", rate.gflops}});
  }
  return {{"square_gflops", p.square_gflops},
          {"square_n", p.square_n},
          {"model_gflops", p.model_gflops},
          {"products_share", report.products_share},
          {"shapes", shapes},
          {"precision", p.precision},
          {"device", p.device},
          {"threads", p.threads},
          {"repeats", p.repeats},
          {"batch", report.batch},
          {"seq_len", report.seq_len},
          {"layers", report.layers},
          {"hidden", report.hidden},
          {"vocab", report.vocab},
          {"vocab_rows", report.vocab_rows},
          {"train_flops_per_token", report.train_flops_per_token}};
}

void print_text(const mlm::train::bench::PeakReport& report) {
  const auto& p = report.peak;
  std::printf("mlm-bench --peak-only: %s on %s, %lld threads, best of %d samples per product\n",
              p.precision.c_str(), p.device.c_str(), static_cast<long long>(p.threads), p.repeats);
  std::printf("  square %lld^3: %.1f GFLOP/s\n", static_cast<long long>(p.square_n), p.square_gflops);
  std::printf("  the step's products (%lld layers, hidden %lld, batch %lld x seq %lld, %lld vocabulary rows):\n",
              static_cast<long long>(report.layers), static_cast<long long>(report.hidden),
              static_cast<long long>(report.batch), static_cast<long long>(report.seq_len),
              static_cast<long long>(report.vocab_rows));
  std::printf("    %-30s %8s %8s %8s %6s %9s %9s %9s %9s\n", "product", "m", "k", "n", "x step",
              "forward", "in grad", "w grad", "GFLOP/s");
  for (const auto& rate : p.shapes) {
    const auto& s = rate.shape;
    std::printf("    %-30s %8lld %8lld %8lld %6lld %9.1f %9.1f %9.1f %9.1f\n", s.name.c_str(),
                static_cast<long long>(s.m), static_cast<long long>(s.k), static_cast<long long>(s.n),
                static_cast<long long>(s.per_step), rate.forward_gflops, rate.input_grad_gflops,
                rate.weight_grad_gflops, rate.gflops);
  }
  std::printf("  model shapes, FLOP-weighted: %.1f GFLOP/s (%.0f%% of the step's model FLOPs; the rest is "
              "attention's S x S products)\n",
              p.model_gflops, 100.0 * report.products_share);
}

// --attention: DeBERTa's self-attention alone, fused and as the ATen composition.
int run_attention(const mlm::config::RunConfig& config, const Options& options) {
  const auto r = mlm::train::bench::run_attention_benchmark(config, options.bench);
  const nlohmann::json j = {{"mode", "attention"}, {"fused_ms", r.fused_ms}, {"fused_forward_ms", r.fused_forward_ms},
                            {"composition_ms", r.composition_ms}, {"composition_forward_ms", r.composition_forward_ms},
                            {"steps", r.steps}, {"batch", r.batch}, {"seq_len", r.seq_len}, {"hidden", r.hidden},
                            {"heads", r.heads}, {"relative_rows", r.relative_rows}, {"threads", r.threads},
                            {"precision", r.precision}, {"device", r.device}};
  if (options.json) {
    std::cout << j.dump() << std::endl;
    return 0;
  }
  std::printf("mlm-bench --attention: one DeBERTa attention.self, batch %lld x seq %lld, hidden %lld, %lld heads, "
              "%lld relative rows, %s on %s, %lld threads\n",
              static_cast<long long>(r.batch), static_cast<long long>(r.seq_len), static_cast<long long>(r.hidden),
              static_cast<long long>(r.heads), static_cast<long long>(r.relative_rows), r.precision.c_str(),
              r.device.c_str(), static_cast<long long>(r.threads));
  std::printf("  fused scores:      %.2f ms per layer-step (forward %.2f ms)\n", r.fused_ms, r.fused_forward_ms);
  std::printf("  ATen composition:  %.2f ms per layer-step (forward %.2f ms)\n", r.composition_ms,
              r.composition_forward_ms);
  return 0;
}

int run(const Options& options) {
  mlm::config::RunConfig config;
  if (!options.config.load(config)) return 0;
  if (options.peak_only) {
    const auto report = mlm::train::bench::run_peak_benchmark(config, options.bench);
    if (options.json) {
      std::cout << to_json(report).dump() << std::endl;
    } else {
      print_text(report);
    }
    return 0;
  }
  if (options.attention) return run_attention(config, options);
  const auto result = mlm::train::bench::run_benchmark(config, options.bench);
  if (options.json) {
    std::cout << to_json(result, options).dump() << std::endl;
  } else {
    print_text(result);
  }
  return 0;
}

// A rate on the command line: a finite number above 0 (CLI::PositiveNumber lets "inf" pass).
const CLI::Validator kPositiveRate(
    [](std::string& text) -> std::string {
      try {
        size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::isfinite(value) && value > 0) return {};
      } catch (const std::exception&) {
      }
      return "must be a positive GFLOP/s rate, got '" + text + "'";
    },
    "POSITIVE");

}  // namespace

int main(int argc, char** argv) {
  Options options;
  return mlm::cli::run_main(
      "mlm-bench", "Time full training steps at the configured shape: tokens/s, time split, MFU",
      argc, argv,
      [&](CLI::App& app) {
        options.config.add_to(app);
        app.add_option("--steps", options.bench.steps, "Timed training steps")
            ->capture_default_str()
            ->check(CLI::PositiveNumber);
        app.add_option("--warmup", options.bench.warmup, "Untimed steps first")
            ->capture_default_str()
            ->check(CLI::NonNegativeNumber);
        app.add_flag("--json", options.json, "Print one JSON object");
        auto* peak_only = app.add_flag(
            "--peak-only", options.peak_only,
            "Measure the peak alone: square products and the step's own products at the config's "
            "shape, precision, device and threads (no training steps)");
        app.add_option("--peak-gflops", options.bench.peak_gflops,
                       "MFU against this peak in GFLOP/s (e.g. --peak-only's square_gflops, shared with "
                       "the peers) instead of one measured in this process")
            ->check(kPositiveRate)
            ->excludes(peak_only);
        app.add_option("--peak-repeats", options.bench.peak_repeats,
                       "Timed samples per product of the peak measurement (the best counts)")
            ->capture_default_str()
            ->check(CLI::PositiveNumber);
        app.add_flag("--attention", options.attention,
                     "DeBERTa (model.architecture deberta_v2): time one layer's disentangled self-attention "
                     "alone, forward and backward, fused and as the ATen composition (ms per layer-step)")
            ->excludes(peak_only);
        app.add_flag("--data", options.bench.real_data,
                     "Real pipeline (tokenizer, streaming dataset, masking) instead of synthetic ids")
            ->excludes(peak_only);
        app.add_option("--profile", options.bench.profile_trace,
                       "Record the timed steps with LibTorch's profiler into this Chrome trace "
                       "(per-operator self times: scripts/profile_ops.py); the steps run slower")
            ->excludes(peak_only);
      },
      [&] { return run(options); }, mlm::cli::libtorch_runtime());
}

#include "mlm/train/tools/bench/peak_flops.h"

#include <torch/cuda.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "mlm/train/run/device.h"
#include "mlm/util/elapsed.h"

namespace mlm::train::bench {
namespace {

// A timed sample runs products back to back for at least this long, then waits for the
// device: a single small product (4096 x 256 x 256 takes ~3 ms on 2 cores, microseconds on a
// GPU) is too short for the clock and, on a GPU, shorter than a launch plus a synchronisation.
double min_sample_seconds(const torch::Device& device) { return device.is_cuda() ? 0.01 : 0.03; }

// One product on the CPU slower than this is a scalar fallback (bf16 without AVX512-BF16,
// where 2048³ can take a minute): that product is the measurement, no repeats.
constexpr double kFallbackSeconds = 1.0;
constexpr int64_t kMaxProductsPerSample = 1000;

int64_t square_size(const torch::Device& device) { return device.is_cuda() ? 8192 : 2048; }

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

/// The best rate of `product` (one queued matrix product of `flops`): one warm-up product
/// (dispatch, oneDNN primitive creation, cuBLAS handles), one more to size the samples, one
/// untimed sample, then the best of `repeats` timed samples.
double best_gflops(const std::function<void()>& product, double flops, const torch::Device& device,
                   int repeats) {
  const auto time_products = [&](int64_t count) {
    const auto start = SteadyClock::now();
    for (int64_t i = 0; i < count; ++i) product();
    synchronize(device);
    return seconds_since(start);
  };
  const double first = time_products(1);
  if (!device.is_cuda() && first > kFallbackSeconds) return flops / first / 1e9;
  const double one = std::max(time_products(1), 1e-9);
  const int64_t per_sample =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(min_sample_seconds(device) / one)), 1, kMaxProductsPerSample);
  time_products(per_sample);
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const double seconds = time_products(per_sample);
    if (seconds > 0) best = std::max(best, flops * static_cast<double>(per_sample) / seconds / 1e9);
  }
  return best;
}

}  // namespace

double measure_peak_gflops(torch::ScalarType dtype, const torch::Device& device, int64_t n, int repeats) {
  if (n <= 0) n = square_size(device);
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  const auto a = torch::randn({n, n}, options);
  const auto b = torch::randn({n, n}, options);
  auto out = torch::empty({n, n}, options);
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  return best_gflops([&] { torch::mm_out(out, a, b); }, flops, device, repeats);
}

GemmRate measure_gemm_gflops(const GemmShape& shape, torch::ScalarType dtype, const torch::Device& device,
                             int repeats) {
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  // The layouts autograd hands a linear layer's products: the weight [n, k] row-major, read
  // transposed by the forward; the output gradient read transposed by the weight gradient.
  const auto input = torch::randn({shape.m, shape.k}, options);
  const auto weight = torch::randn({shape.n, shape.k}, options);
  const auto grad_output = torch::randn({shape.m, shape.n}, options);
  auto output = torch::empty({shape.m, shape.n}, options);
  auto grad_input = torch::empty({shape.m, shape.k}, options);
  auto grad_weight = torch::empty({shape.n, shape.k}, options);
  const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.k) * static_cast<double>(shape.n);

  GemmRate rate;
  rate.shape = shape;
  rate.forward_gflops = best_gflops([&] { torch::mm_out(output, input, weight.t()); }, flops, device, repeats);
  rate.input_grad_gflops = best_gflops([&] { torch::mm_out(grad_input, grad_output, weight); }, flops, device, repeats);
  rate.weight_grad_gflops =
      best_gflops([&] { torch::mm_out(grad_weight, grad_output.t(), input); }, flops, device, repeats);
  rate.gflops = 3.0 / (1.0 / rate.forward_gflops + 1.0 / rate.input_grad_gflops + 1.0 / rate.weight_grad_gflops);
  return rate;
}

double flop_weighted_gflops(const std::vector<GemmRate>& rates) {
  double flops = 0, seconds = 0;
  for (const auto& r : rates) {
    if (r.gflops <= 0) continue;
    flops += r.shape.step_flops();
    seconds += r.shape.step_flops() / (r.gflops * 1e9);
  }
  return seconds > 0 ? flops / seconds / 1e9 : 0;
}

PeakMeasurement measure_peaks(const std::vector<GemmShape>& shapes, torch::ScalarType dtype,
                              const torch::Device& device, int repeats) {
  PeakMeasurement peak;
  peak.precision = precision_name(dtype);
  peak.device = device.str();
  peak.threads = torch::get_num_threads();
  peak.repeats = repeats;
  peak.square_n = square_size(device);
  peak.square_gflops = measure_peak_gflops(dtype, device, peak.square_n, repeats);
  for (const auto& shape : shapes) peak.shapes.push_back(measure_gemm_gflops(shape, dtype, device, repeats));
  peak.model_gflops = flop_weighted_gflops(peak.shapes);
  return peak;
}

}  // namespace mlm::train::bench

#include "mlm/train/tools/bench/peak_flops.h"

#include <torch/cuda.h>

#include <algorithm>

#include "mlm/util/elapsed.h"

namespace mlm::train::bench {

double measure_peak_gflops(torch::ScalarType dtype, const torch::Device& device, int64_t n,
                           int repeats) {
  if (n <= 0) n = device.is_cuda() ? 8192 : 2048;
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  const auto a = torch::randn({n, n}, options);
  const auto b = torch::randn({n, n}, options);
  auto out = torch::empty({n, n}, options);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  torch::mm_out(out, a, b);  // warm-up: first-call dispatch, oneDNN primitive creation
  sync();
  double best = 0;
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = SteadyClock::now();
    torch::mm_out(out, a, b);
    sync();
    const double seconds = seconds_since(start);
    if (seconds > 0) best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

}  // namespace mlm::train::bench

#pragma once
// The machine's attainable matrix-product rate, the denominator of MFU: shared machines differ
// from any datasheet and from one minute to the next. Measured as a product benchmark (warmed
// up, best of N samples, each sample long enough to time), at a large square and at a
// model's own GEMM shapes (model_gemm_shapes.h). `mlm-bench --peak-only` measures it once,
// and `--peak-gflops` hands it to mlm-bench and the PyTorch peers alike, so their MFU figures
// divide by one number.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "mlm/train/tools/bench/model_gemm_shapes.h"

namespace mlm::train::bench {

/// Best of `repeats` timed samples of n×n products of `dtype` on `device`, in GFLOP/s (2·n³
/// per product). n = 0: the device's size, 2048 on a CPU (2 cores are busy 10-100 ms), 8192
/// on a GPU (which finishes 2048³ in microseconds, where launch overhead would understate the
/// peak). bf16 on CPU goes through oneDNN, fp32 through the BLAS LibTorch was built against.
double measure_peak_gflops(torch::ScalarType dtype, const torch::Device& device, int64_t n = 0,
                           int repeats = 5);

/// One shape's rates: its forward product and the two of its backward, each the best of
/// `repeats` samples, and the three together (equal FLOPs: the rate of running all three).
struct GemmRate {
  GemmShape shape;
  double forward_gflops = 0;
  double input_grad_gflops = 0;
  double weight_grad_gflops = 0;
  double gflops = 0;
};

GemmRate measure_gemm_gflops(const GemmShape& shape, torch::ScalarType dtype, const torch::Device& device,
                             int repeats = 5);

/// The FLOP-weighted rate over a step's products: their FLOPs over the time they take at
/// their measured rates (Σ flops / Σ flops/rate), what the step's products could reach at best.
double flop_weighted_gflops(const std::vector<GemmRate>& rates);

/// Both peaks of one precision on one device.
struct PeakMeasurement {
  std::string precision;      // fp32 | bf16 | fp16
  std::string device;         // cpu | cuda:N
  int64_t threads = 0;
  int repeats = 0;
  int64_t square_n = 0;
  double square_gflops = 0;
  std::vector<GemmRate> shapes;
  double model_gflops = 0;    // flop_weighted_gflops(shapes)
};

/// The square (n = 0: the device's size) and each of `shapes`, `repeats` samples each.
PeakMeasurement measure_peaks(const std::vector<GemmShape>& shapes, torch::ScalarType dtype,
                              const torch::Device& device, int repeats = 5);

}  // namespace mlm::train::bench

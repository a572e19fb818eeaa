#pragma once
// The machine's attainable matrix-product rate, measured in the same process as the
// benchmark (the denominator of MFU): shared machines differ from any datasheet and from
// one minute to the next.
#include <torch/torch.h>

namespace mlm::train::bench {

/// Best of `repeats` products of two n×n matrices of `dtype` on `device` (after one warm-up
/// product), in GFLOP/s (2·n³ per product). bf16 on CPU goes through oneDNN, fp32 through
/// the BLAS LibTorch was built against. n = 0: the device's size, 2048 on a CPU (2 cores are
/// busy 10-100 ms), 8192 on a GPU (which finishes 2048³ in microseconds, where launch
/// overhead would understate the peak).
double measure_peak_gflops(torch::ScalarType dtype, const torch::Device& device, int64_t n = 0,
                           int repeats = 5);

}  // namespace mlm::train::bench

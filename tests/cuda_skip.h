#pragma once
// The GPU tests (suites named Cuda*, label "gpu"): they skip, saying why, where there is no
// CUDA device, and run where there is one (scripts/gpu_check.sh).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#define MLM_SKIP_WITHOUT_CUDA_DEVICES(n)                                                   \
  do {                                                                                     \
    if (static_cast<int>(torch::cuda::device_count()) < (n))                               \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s); this machine has "              \
                   << torch::cuda::device_count()                                          \
                   << (torch::cuda::is_available() ? "" : " (no CUDA driver or GPU)");     \
  } while (0)

#pragma once
// The GPU tests (suites named Cuda*, label "gpu"): they skip, saying why, where there is no
// CUDA device, and run where there is one (scripts/gpu_check.sh).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#ifdef MLM_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#define MLM_SKIP_WITHOUT_CUDA_DEVICES(n)                                                   \
  do {                                                                                     \
    if (static_cast<int>(torch::cuda::device_count()) < (n))                               \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s); this machine has "              \
                   << torch::cuda::device_count()                                          \
                   << (torch::cuda::is_available() ? "" : " (no CUDA driver or GPU)");     \
  } while (0)

#ifdef MLM_WITH_CUDA
namespace mlm::testing {

/// While alive, any synchronising CUDA call (a host read, a blocking copy) throws: CUDA's sync
/// debug mode set to error, after the work queued before it has finished; reset on the way out,
/// a throw included.
class NoDeviceSyncs {
 public:
  NoDeviceSyncs() {
    torch::cuda::synchronize();
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~NoDeviceSyncs() { c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED); }
  NoDeviceSyncs(const NoDeviceSyncs&) = delete;
  NoDeviceSyncs& operator=(const NoDeviceSyncs&) = delete;
};

}  // namespace mlm::testing
#endif

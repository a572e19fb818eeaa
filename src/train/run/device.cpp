#include "mlm/train/run/device.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if MLM_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "mlm/model/kernels/parallel_rows.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {

torch::Device resolve_device(config::DeviceKind kind, int local_rank) {
  const bool has_cuda = torch::cuda::is_available();
  if (kind == config::DeviceKind::cpu || (kind == config::DeviceKind::auto_detect && !has_cuda)) {
    return torch::kCPU;
  }
  if (!has_cuda) {
    throw ConfigError(
        "train.device: cuda requested, but this LibTorch has no CUDA or no GPU is visible "
        "(valid: auto, cpu)",
        "train.device");
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % count));
}

bool cpu_has_fast_bf16() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

namespace {

bool gpu_has_bf16(const torch::Device& device) {
#if MLM_WITH_CUDA
  return at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index())->major >= 8;
#else
  (void)device;
  return false;
#endif
}

}  // namespace

torch::Dtype compute_dtype(config::Precision precision, const torch::Device& device) {
  switch (precision) {
    case config::Precision::fp32: return torch::kFloat32;
    case config::Precision::bf16: return torch::kBFloat16;
    case config::Precision::fp16: return torch::kHalf;
    case config::Precision::auto_detect:
      if (device.is_cuda()) return gpu_has_bf16(device) ? torch::kBFloat16 : torch::kHalf;
      return cpu_has_fast_bf16() ? torch::kBFloat16 : torch::kFloat32;
  }
  return torch::kFloat32;
}

const char* precision_name(torch::Dtype compute_dtype) {
  if (compute_dtype == torch::kBFloat16) return "bf16";
  if (compute_dtype == torch::kHalf) return "fp16";
  return "fp32";
}

double peak_device_memory_mb(const torch::Device& device) {
#if MLM_WITH_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index() < 0 ? 0 : device.index());
    const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    return static_cast<double>(stats.allocated_bytes[aggregate].peak) / (1024.0 * 1024.0);
  }
#endif
  (void)device;
  return 0;
}

void configure_memory() {
#if defined(__GLIBC__)
  if (const char* keep = std::getenv("MLM_MALLOC_DEFAULT"); keep != nullptr && *keep == '1') return;
  mallopt(M_MMAP_MAX, 0);  // large blocks from the heap, reused after free
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

namespace {

int64_t positive_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && value > 0 ? value : 0;
}

}  // namespace

void configure_threads(int64_t threads, int local_world_size) {
  int64_t n = threads;
  if (n <= 0) n = positive_env("OMP_NUM_THREADS");
  if (n <= 0) {
    const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    n = std::max<int64_t>(1, cores / std::max(1, local_world_size));
  }
  torch::set_num_threads(static_cast<int>(n));
  if (n > 1 && !model::kernels::kernels_split_rows()) {
    log::warn("train", "{} threads: this build's fused CPU kernels run on one thread (compiled without "
              "LibTorch's parallel backend; docs/BUILD.md)", n);
  }
}

}  // namespace mlm::train

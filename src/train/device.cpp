#include "mlm/train/device.h"

#include <thread>

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

void configure_threads(int64_t threads) {
  int64_t n = threads;
  if (n <= 0) n = std::max(1u, std::thread::hardware_concurrency());
  torch::set_num_threads(static_cast<int>(n));
}

}  // namespace mlm::train

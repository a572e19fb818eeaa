#include "mlm/train/autocast.h"

#include <ATen/autocast_mode.h>

namespace mlm::train {

AutocastScope::AutocastScope(bool enabled, const torch::Device& device) {
  if (!enabled) return;
  active_ = true;
  cuda_ = device.is_cuda();
  if (cuda_) {
    previous_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  } else {
    previous_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  }
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (cuda_) {
    at::autocast::set_enabled(previous_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
  } else {
    at::autocast::set_cpu_enabled(previous_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
  }
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
}

}  // namespace mlm::train

#include "mlm/train/loop/autocast.h"

#include <ATen/autocast_mode.h>

namespace mlm::train {

AutocastScope::AutocastScope(torch::Dtype dtype, const torch::Device& device)
    : active_(dtype != torch::kFloat32), device_type_(device.type()) {
  if (!active_) return;
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
}

}  // namespace mlm::train

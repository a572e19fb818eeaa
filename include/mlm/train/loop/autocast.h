#pragma once
// bf16 or fp16 autocast for one forward pass, the C++ counterpart of Python's `torch.autocast`:
// enables it for the device type, and on leaving the outermost scope clears the cast cache
// (otherwise low-precision copies of the fp32 master weights would go stale after the
// optimizer step).
#include <torch/torch.h>

namespace mlm::train {

class AutocastScope {
 public:
  /// Autocasts to `dtype` (kBFloat16 or kHalf); does nothing for kFloat32 (fp32 runs).
  AutocastScope(torch::Dtype dtype, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  c10::DeviceType device_type_;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

}  // namespace mlm::train

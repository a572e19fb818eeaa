#pragma once
// Which gradients share a flat all-reduce buffer (GradientReducer).
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace mlm::dist {

struct Bucket {
  std::vector<size_t> params;  // indices into the parameter list, in buffer order
  int64_t numel = 0;
  torch::Dtype dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;
};

/// The parameters taken in REVERSE order (the last registered first: roughly the order the
/// backward pass produces their gradients, so the first buckets fill first), consecutive ones
/// of one dtype and device sharing a bucket of up to `bucket_bytes`; a larger parameter gets
/// its own. Every parameter lands in exactly one bucket.
std::vector<Bucket> plan_buckets(const std::vector<torch::Tensor>& params, int64_t bucket_bytes);

}  // namespace mlm::dist

#pragma once
// Data-parallel gradient sum: after backward, every rank's gradients are replaced by their
// sum over all ranks. Gradients are copied into flat buckets of about bucket_mb (one
// all-reduce each, all in flight at once), then copied back. They are SUMMED, not averaged:
// the trainer divides the loss by the global masked-token count instead, so N ranks x batch
// B equal one process x batch N*B.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "mlm/dist/communicator.h"

namespace mlm::dist {

/// Which parameters share a flat buffer: consecutive parameters (in the given order) of one
/// dtype and device, up to `bucket_bytes` per bucket; a larger parameter gets its own.
struct Bucket {
  std::vector<size_t> params;  // indices into the parameter list
  int64_t numel = 0;
  torch::Dtype dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;
};
std::vector<Bucket> plan_buckets(const std::vector<torch::Tensor>& params, int64_t bucket_bytes);

class GradientReducer {
 public:
  /// `params`: the trained parameters (those not requiring grad and repeated ones are
  /// dropped). `bucket_mb` >= 1 (distributed.bucket_mb).
  GradientReducer(std::shared_ptr<Communicator> comm, std::vector<torch::Tensor> params,
                  int64_t bucket_mb);

  /// Sums the gradients across ranks, in place. Call on every rank after the last backward
  /// of a step. A parameter without a gradient on this rank counts as zeros (and gets a
  /// gradient), so ranks that skipped part of the model still agree.
  void reduce();

  size_t num_buckets() const { return buckets_.size(); }

 private:
  std::shared_ptr<Communicator> comm_;
  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<torch::Tensor> buffers_;  // one flat buffer per bucket, allocated once
};

}  // namespace mlm::dist

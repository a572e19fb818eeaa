#pragma once
// Dropout whose mask comes from Philox in parallel blocks (philox.h) instead of one draw per
// element from the CPU generator on one thread (ATen's CPU bernoulli_): the same mask for a
// seed whatever the thread count. Other devices take ATen's own dropout.
#include <torch/torch.h>

#include <cstdint>

namespace mlm::model::kernels {

/// uint8 [numel] (1 = kept, probability 1 - p) of the mask under `seed`, drawn in parallel.
torch::Tensor keep_mask(int64_t numel, double p, uint64_t seed);

/// x * keep / (1 - p) (x contiguous, any floating dtype; keep as keep_mask gives it), in x's
/// dtype, computed in fp32.
torch::Tensor apply_keep(const torch::Tensor& x, const torch::Tensor& keep, double p);

/// Inverted dropout of x with probability p when `training` (x itself otherwise, or when p is
/// 0), differentiable; CPU: a Philox mask under next_mask_seed(); elsewhere torch::dropout.
torch::Tensor dropout(const torch::Tensor& x, double p, bool training);

}  // namespace mlm::model::kernels

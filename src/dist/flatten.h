#pragma once
// Private to src/dist: lists of tensors of mixed shapes go through one collective per
// (dtype, device) as a single flat buffer.
#include <torch/torch.h>

#include <vector>

namespace mlm::dist {

/// Indices of `tensors` grouped by (dtype, device), each group in list order, groups in order
/// of first appearance. Throws std::invalid_argument for an undefined or sparse tensor.
std::vector<std::vector<size_t>> group_by_dtype_and_device(const std::vector<torch::Tensor>& tensors);

/// The tensors of `group`, concatenated into one new 1-D contiguous tensor.
torch::Tensor flatten(const std::vector<torch::Tensor>& tensors, const std::vector<size_t>& group);

/// Copies consecutive slices of `flat` back into the tensors of `group`, in place.
void unflatten_into(const torch::Tensor& flat, std::vector<torch::Tensor>& tensors,
                    const std::vector<size_t>& group);

}  // namespace mlm::dist

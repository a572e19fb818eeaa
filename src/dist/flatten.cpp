#include "flatten.h"

#include <stdexcept>
#include <string>

namespace mlm::dist {

std::vector<std::vector<size_t>> group_by_dtype_and_device(
    const std::vector<torch::Tensor>& tensors) {
  std::vector<std::vector<size_t>> groups;
  std::vector<std::pair<torch::Dtype, torch::Device>> keys;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    if (!t.defined() || t.is_sparse()) {
      throw std::invalid_argument("collective on tensor " + std::to_string(i) +
                                  ": it is undefined or sparse (dense tensors only)");
    }
    const std::pair<torch::Dtype, torch::Device> key{t.scalar_type(), t.device()};
    size_t g = 0;
    while (g < keys.size() && keys[g] != key) ++g;
    if (g == keys.size()) {
      keys.push_back(key);
      groups.emplace_back();
    }
    groups[g].push_back(i);
  }
  return groups;
}

torch::Tensor flatten(const std::vector<torch::Tensor>& tensors, const std::vector<size_t>& group) {
  std::vector<torch::Tensor> pieces;
  pieces.reserve(group.size());
  for (size_t i : group) pieces.push_back(tensors[i].reshape({-1}));
  return torch::cat(pieces);
}

void unflatten_into(const torch::Tensor& flat, std::vector<torch::Tensor>& tensors,
                    const std::vector<size_t>& group) {
  int64_t offset = 0;
  for (size_t i : group) {
    auto& t = tensors[i];
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace mlm::dist

#pragma once
// Text for the weight loaders' one-line errors (hf_weights.cpp, modernbert_weights.cpp).
#include <fmt/format.h>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace mlm::model {

inline std::string shape_str(const torch::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// Lists at most `limit` entries so that loading a model of another size stays one readable line.
inline std::string join_limited(const std::vector<std::string>& items, size_t limit = 12) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += fmt::format(", ... ({} more)", items.size() - limit);
  return out;
}

}  // namespace mlm::model

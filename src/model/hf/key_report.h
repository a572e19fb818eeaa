#pragma once
// Text for the weight loaders' one-line errors (hf_weights.cpp, modernbert_weights.cpp).
#include <fmt/format.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mlm/model/hf/tensor_file.h"

namespace mlm::model {

inline std::string shape_str(const torch::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// Lists at most `limit` entries so that loading a model of another size stays one readable line.
inline std::string join_limited(const std::vector<std::string>& items, size_t limit = 12) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += fmt::format(", ... ({} more)", items.size() - limit);
  return out;
}

/// How a file's tensors (`source`, by name) answer the tensors a model expects.
struct KeyMatch {
  std::vector<std::string> missing, mismatched, unexpected;
  bool ok() const { return missing.empty() && mismatched.empty() && unexpected.empty(); }
  /// "; shape mismatches: ...; missing keys: ...; unexpected keys: ..." for those present.
  std::string describe() const {
    std::string msg;
    if (!mismatched.empty()) msg += "; shape mismatches: " + join_limited(mismatched);
    if (!missing.empty()) msg += "; missing keys: " + join_limited(missing);
    if (!unexpected.empty()) msg += "; unexpected keys: " + join_limited(unexpected);
    return msg;
  }
};

/// Compares names and shapes; `optional(key)` marks an expected key the file may lack (a tied
/// copy) and `ignorable(key)` a file key that is no weight of the model (a buffer).
inline KeyMatch match_keys(const TensorDict& expected, const std::map<std::string, torch::Tensor>& source,
                           const std::function<bool(const std::string&)>& optional,
                           const std::function<bool(const std::string&)>& ignorable) {
  KeyMatch match;
  std::set<std::string> names;
  for (const auto& [key, target] : expected) {
    names.insert(key);
    const auto it = source.find(key);
    if (it == source.end()) {
      if (!optional(key)) match.missing.push_back(key + " " + shape_str(target));
    } else if (it->second.sizes() != target.sizes()) {
      match.mismatched.push_back(key + " file " + shape_str(it->second) + " vs model " + shape_str(target));
    }
  }
  for (const auto& [key, tensor] : source)
    if (!names.count(key) && !ignorable(key)) match.unexpected.push_back(key + " " + shape_str(tensor));
  return match;
}

}  // namespace mlm::model

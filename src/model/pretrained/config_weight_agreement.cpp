// config.json against the weights beside it, before a model is built from config.json: the
// tensors that carry each dimension (transformers' key names, whatever the prefix: bert.,
// roberta., electra., model.) must have the shape the file says. A config.json that disagrees
// would otherwise build a model of its own shape first, perhaps gigabytes, and fail after.
#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "mlm/model/architectures.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"

namespace mlm::model {
// Named, not anonymous: the unity build compiles this file with its neighbours.
namespace config_weight_agreement_detail {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string shape_of(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + "]";
}

}  // namespace config_weight_agreement_detail

void require_config_matches_weights(const config::ModelConfig& c, const TensorDict& weights,
                                    const std::string& config_path, const std::string& weights_path) {
  using namespace config_weight_agreement_detail;
  const auto& spec = architecture_spec(c.architecture);
  const auto dimensions = spec.weight_dimensions(c);
  const std::regex layer_key("(?:^|\\.)" + spec.layer_key_pattern());
  int64_t layers = 0;
  for (const auto& [key, tensor] : weights) {
    std::smatch m;
    if (std::regex_search(key, m, layer_key)) layers = std::max<int64_t>(layers, std::stoll(m[1].str()) + 1);
    for (const auto& d : dimensions) {
      if (!ends_with(key, d.key_suffix) || tensor.dim() <= d.dim) continue;
      if (tensor.size(d.dim) != d.value * d.multiple) {
        throw CheckpointError(fmt::format("{}: {} {} disagrees with {}, whose {} has shape {}", config_path,
                                          d.config_key, d.value, weights_path, key, shape_of(tensor)));
      }
    }
  }
  // The layers the keys number, when they number any, are config.json's layers.
  if (layers > 0 && layers != c.num_hidden_layers) {
    throw CheckpointError(fmt::format("{}: num_hidden_layers {} disagrees with {}, which holds {} layers",
                                      config_path, c.num_hidden_layers, weights_path, layers));
  }
}

}  // namespace mlm::model

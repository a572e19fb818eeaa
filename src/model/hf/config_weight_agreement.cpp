// config.json against the weights beside it, before a model is built from config.json: the
// tensors that carry each dimension (transformers' key names, whatever the prefix: bert.,
// roberta., electra., model.) must have the shape the file says. A config.json that disagrees
// would otherwise build a model of its own shape first, perhaps gigabytes, and fail after.
#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "mlm/model/hf/hf_directory.h"
#include "mlm/util/errors.h"

namespace mlm::model {
// Named, not anonymous: the unity build compiles this file with hf_directory.cpp.
namespace config_weight_agreement_detail {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string shape_of(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t d = 0; d < t.dim(); ++d) out += (d ? ", " : "") + std::to_string(t.size(d));
  return out + "]";
}

// A tensor whose size along `dim` is `multiple` x the config.json value of `key`.
struct Dimension {
  const char* key_suffix;
  int64_t dim;
  const char* config_key;
  int64_t value;
  int64_t multiple = 1;
};

}  // namespace config_weight_agreement_detail

void require_config_matches_weights(const config::ModelConfig& c, const TensorDict& weights,
                                    const std::string& config_path, const std::string& weights_path) {
  using namespace config_weight_agreement_detail;
  const bool modernbert = c.architecture == config::Architecture::modernbert;
  const int64_t embedding = c.architecture == config::Architecture::electra ? config::electra_embedding_size(c)
                                                                            : c.hidden_size;
  std::vector<Dimension> dimensions = {
      {"embeddings.word_embeddings.weight", 1, embedding != c.hidden_size ? "embedding_size" : "hidden_size", embedding},
      {"embeddings.tok_embeddings.weight", 1, "hidden_size", c.hidden_size},
      {"embeddings.position_embeddings.weight", 0, "max_position_embeddings", c.max_position_embeddings},
      {"embeddings.token_type_embeddings.weight", 0, "type_vocab_size", c.type_vocab_size},
      {"encoder.layer.0.attention.self.query.weight", 0, "hidden_size", c.hidden_size},
      {"encoder.layer.0.intermediate.dense.weight", 0, "intermediate_size", c.intermediate_size},
      {"layers.0.attn.Wqkv.weight", 0, "hidden_size", c.hidden_size, 3},
      {"layers.0.mlp.Wi.weight", 0, "intermediate_size", c.intermediate_size, 2},  // gated: two halves
  };
  // vocab_size 0 means the tokenizer's size: then the rows are not config.json's to say.
  if (c.vocab_size > 0) {
    dimensions.push_back({"embeddings.word_embeddings.weight", 0, "vocab_size", c.vocab_size});
    dimensions.push_back({"embeddings.tok_embeddings.weight", 0, "vocab_size", c.vocab_size});
  }
  const std::regex layer_key(modernbert ? R"((?:^|\.)layers\.(\d+)\.)" : R"((?:^|\.)encoder\.layer\.(\d+)\.)");
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

// The model section's derived values that depend on the architecture, each asked of its keys
// (config/architecture_keys.h).
#include <algorithm>
#include <cmath>

#include "mlm/config/architecture_keys.h"

namespace mlm::config {

int64_t position_offset(const ModelConfig& m, int64_t pad_id) {
  return architecture_keys(m.architecture).positions_follow_pad_id() ? pad_id + 1 : 0;
}

int64_t factorized_embedding_size(const ModelConfig& m) {
  return architecture_keys(m.architecture).factorized_embeddings() ? electra_embedding_size(m) : 0;
}

double generator_hidden_ratio(const ModelConfig& m) {
  if (m.generator_hidden_ratio > 0) return m.generator_hidden_ratio;
  return architecture_keys(m.architecture).default_generator_hidden_ratio();
}

double generator_layers_ratio(const ModelConfig& m) {
  if (m.generator_layers_ratio > 0) return m.generator_layers_ratio;
  return architecture_keys(m.architecture).default_generator_layers_ratio();
}

GeneratorShape generator_shape(const ModelConfig& m) {
  GeneratorShape g;
  g.hidden_size = std::llround(static_cast<double>(m.hidden_size) * generator_hidden_ratio(m));
  g.num_hidden_layers = std::llround(static_cast<double>(m.num_hidden_layers) * generator_layers_ratio(m));
  if (architecture_keys(m.architecture).generator_keeps_layer_shape() && g.hidden_size == m.hidden_size) {
    g.num_attention_heads = m.num_attention_heads;
    g.intermediate_size = m.intermediate_size;
  } else {
    g.num_attention_heads = std::max<int64_t>(1, g.hidden_size / 64);
    g.intermediate_size = 4 * g.hidden_size;
  }
  return g;
}

}  // namespace mlm::config

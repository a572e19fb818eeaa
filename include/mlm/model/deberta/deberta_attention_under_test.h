#pragma once
// One DeBERTa layer's disentangled self-attention on its own, for mlm-bench --attention
// (ArchitectureSpec::attention_under_test).
#include <memory>

#include "mlm/model/architecture_spec.h"

namespace mlm::model {

/// A one-layer encoder of `config`'s shape without tables: the layer, the relative embeddings
/// and their norm, initialised (seed first).
std::unique_ptr<AttentionUnderTest> deberta_attention_under_test(const config::ModelConfig& config);

}  // namespace mlm::model

#pragma once
// Whether models can be merged: one architecture and shape, one tokenizer, the same tensors.
// Read from config.json, the tokenizer files and the safetensors headers, before any tensor.
#include <filesystem>
#include <string>
#include <vector>

#include "mlm/model/hf/safetensors.h"

namespace mlm::train::merge {

/// One network of one input: its directory and its weight file's header.
struct NetworkFiles {
  std::string label;  // the input as the user named it
  std::filesystem::path dir;
  model::SafetensorsFile weights;
};

/// UsageError naming the input and the reason when `other` cannot merge with `reference`:
/// another architecture or model_type, a config.json integer (a size, an id) that differs,
/// another tokenizer (its serialized model or added tokens), or another set of tensors, a
/// tensor of another shape or dtype. Other config.json differences are warnings.
void require_mergeable(const NetworkFiles& reference, const NetworkFiles& other);

}  // namespace mlm::train::merge

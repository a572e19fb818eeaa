#pragma once
// config.json, the Hugging Face description of a model, both ways: the registered
// architecture its model_type names reads it; the model's own writes it.
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The model settings config.json at `path` describes, on top of `base` for what it does not
/// say: its model_type (absent: "bert") picks the architecture, whose spec reads the fields.
/// CheckpointError naming the file for a config.json that cannot be parsed, a model_type no
/// registered architecture reads, a field of the wrong type, a value mlm-train does not compute
/// or a shape it cannot build (require_buildable_shape).
config::ModelConfig model_config_from_hf(const std::string& path, config::ModelConfig base);

/// config.json of `model`: its architecture's transformers config, model_type, architectures.
nlohmann::json hf_config_json(MaskedLm model);

/// An architecture whose positions follow the padding id (RoBERTa numbers them from
/// pad_token_id + 1) cannot use weights trained with another: CheckpointError naming
/// `config_json` and both ids when its pad_token_id differs from `pad_id` (the tokenizer's).
/// Nothing for the other architectures or without pad_token_id.
void require_same_pad_id(const std::string& config_json, int64_t pad_id);

}  // namespace mlm::model

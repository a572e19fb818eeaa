#pragma once
// A Hugging Face config.json's fields and the model settings, both ways (hf_directory.cpp,
// export_hf.cpp, modernbert_config.cpp; the shared parts in config_json.cpp).
#include <nlohmann/json.hpp>

#include <string>
#include <type_traits>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"
#include "mlm/util/errors.h"

namespace mlm::model {

/// json[key] into `field` when present and not null; CheckpointError naming the file and key
/// for a value of the wrong type.
template <class T>
void take(const nlohmann::json& json, const char* key, T& field, const std::string& path) {
  if (!json.contains(key) || json[key].is_null()) return;
  try {
    field = json[key].get<T>();
  } catch (const std::exception&) {
    const char* kind = std::is_same_v<T, bool>            ? "true or false"
                       : std::is_floating_point_v<T>      ? "number"
                       : std::is_same_v<T, std::string>   ? "string"
                                                          : "whole number";
    throw CheckpointError(path + ": " + key + " is " + json[key].dump() + ", not a " + kind);
  }
}

/// transformers' activation name as mlm-train's: "gelu" is the exact erf form; "gelu_new",
/// "gelu_pytorch_tanh" and "gelu_fast" the tanh approximation. CheckpointError for another.
config::Activation activation_from_hf(const std::string& name, const char* key, const std::string& path);

/// json[key], when present and not null, read as an activation (activation_from_hf) into `act`.
void take_activation(const nlohmann::json& json, const char* key, config::Activation& act,
                     const std::string& path);

/// The fields BertConfig and ModernBertConfig name alike (vocab_size, the shape,
/// max_position_embeddings, initializer_range), read into `c` / written for `model`.
void take_common_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c);
void put_common_fields(const MaskedLmImpl& model, nlohmann::json& json);

/// The fields BertConfig, RobertaConfig and ElectraConfig share beyond the common ones
/// (activation, dropouts, token types, LayerNorm epsilon, pad id, absolute positions), read /
/// written; reading refuses relative positions and an untied decoder (CheckpointError).
void take_bert_layer_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c);
void put_bert_layer_fields(const MaskedLmImpl& model, nlohmann::json& json);

/// The fields that decide the weights' shapes (and for ModernBERT which layers look how far)
/// where `theirs` (a config.json's) differs from `ours`: "hidden_size 768 (set
/// model.hidden_size: 256), ..."; empty when they agree.
std::string shape_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs);

/// The fp32 parameters a model of `c`'s shape holds with `vocab_rows` embedding rows (the
/// generator too for objective rtd), in double since a file's dimensions may overflow int64.
double estimated_parameters(const config::ModelConfig& c, int64_t vocab_rows);

/// The shape a config.json at `path` gave, checked before anything is built from it: every
/// dimension at least 1, num_attention_heads dividing hidden_size, and the weights within the
/// machine's physical memory. CheckpointError naming the file, the key and the value.
void require_buildable_shape(const config::ModelConfig& c, const std::string& path);

/// A config.json's object; CheckpointError naming the file when it cannot be read or parsed.
nlohmann::json read_json_file(const std::string& path);

/// The RobertaConfig / XLMRobertaConfig fields of config.json (model_type roberta or
/// xlm-roberta) on top of `base` (config_json.cpp).
config::ModelConfig roberta_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig base);

/// The ModernBertConfig fields of config.json (model_type modernbert) on top of `base`.
config::ModelConfig modernbert_config_from_hf(const nlohmann::json& json, const std::string& path,
                                              config::ModelConfig base);

}  // namespace mlm::model

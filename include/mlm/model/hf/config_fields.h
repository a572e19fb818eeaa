#pragma once
// A Hugging Face config.json's fields and the model settings, field by field: the reading and
// writing every architecture's config.json shares (each spec composes its own from these).
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

/// The fields transformers' encoder configs name alike (vocab_size, the shape,
/// max_position_embeddings, initializer_range), read into `c` / written for `model`.
void take_common_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c);
void put_common_fields(const MaskedLmImpl& model, nlohmann::json& json);

/// tie_word_embeddings false is refused (CheckpointError naming `path`): the decoder is tied.
void require_tied_embeddings(const nlohmann::json& json, const std::string& path);

/// A config.json's object; CheckpointError naming the file when it cannot be read or parsed.
nlohmann::json read_json_file(const std::string& path);

}  // namespace mlm::model

#pragma once
// A Hugging Face config.json's fields and the model settings, field by field: the reading and
// writing every architecture's config.json shares (each spec composes its own from these).
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"
#include "mlm/util/errors.h"

namespace mlm::model {

/// json[key] into `field` when present and not null; CheckpointError naming the file and key
/// for a value of the wrong type, and for a whole-number field a fraction or a value past its range.
template <class T>
void take(const nlohmann::json& json, const char* key, T& field, const std::string& path) {
  if (!json.contains(key) || json[key].is_null()) return;
  const auto& value = json[key];
  const char* kind = std::is_same_v<T, bool>            ? "true or false"
                     : std::is_floating_point_v<T>      ? "number"
                     : std::is_same_v<T, std::string>   ? "string"
                                                        : "whole number";
  auto refuse = [&] { return CheckpointError(path + ": " + key + " is " + value.dump() + ", not a " + kind); };
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // nlohmann casts a float (768.0, 1e300) or an unsigned past T's range as it is: truncated,
    // or undefined behaviour. Only whole values T holds are taken.
    if (value.is_number_float()) {
      const double v = value.get<double>(), limit = std::ldexp(1.0, std::numeric_limits<T>::digits);
      if (!(v >= (std::is_signed_v<T> ? -limit : 0.0) && v < limit) || std::trunc(v) != v) throw refuse();
      field = static_cast<T>(v);
      return;
    }
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      throw refuse();
    }
  }
  try {
    field = value.get<T>();
  } catch (const std::exception&) {
    throw refuse();
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

#include "mlm/model/hf/config_fields.h"

#include <fstream>

namespace mlm::model {

config::Activation activation_from_hf(const std::string& name, const char* key, const std::string& path) {
  if (name == "gelu") return config::Activation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return config::Activation::gelu_tanh;
  throw CheckpointError(path + ": " + key + " " + name + " is not one mlm-train computes (gelu, gelu_new)");
}

void take_activation(const nlohmann::json& json, const char* key, config::Activation& act,
                     const std::string& path) {
  std::string name;
  take(json, key, name, path);
  if (!name.empty()) act = activation_from_hf(name, key, path);
}

void take_common_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c) {
  take(json, "vocab_size", c.vocab_size, path);
  take(json, "hidden_size", c.hidden_size, path);
  take(json, "num_hidden_layers", c.num_hidden_layers, path);
  take(json, "num_attention_heads", c.num_attention_heads, path);
  take(json, "intermediate_size", c.intermediate_size, path);
  take(json, "max_position_embeddings", c.max_position_embeddings, path);
  take(json, "initializer_range", c.initializer_range, path);
}

void put_common_fields(const MaskedLmImpl& model, nlohmann::json& json) {
  const auto& c = model.config();
  json["vocab_size"] = model.vocab_size();  // the tokenizer's, not the padded rows
  json["hidden_size"] = c.hidden_size;
  json["num_hidden_layers"] = c.num_hidden_layers;
  json["num_attention_heads"] = c.num_attention_heads;
  json["intermediate_size"] = c.intermediate_size;
  json["max_position_embeddings"] = c.max_position_embeddings;
  json["initializer_range"] = c.initializer_range;
}

void require_tied_embeddings(const nlohmann::json& json, const std::string& path) {
  if (!json.value("tie_word_embeddings", true))
    throw CheckpointError(path + ": tie_word_embeddings is false; mlm-train's decoder is tied to the embeddings");
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CheckpointError(path + ": cannot read");
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw CheckpointError(path + ": cannot parse JSON: " + e.what());
  }
}

}  // namespace mlm::model

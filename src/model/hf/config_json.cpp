#include "config_json.h"

#include <fmt/format.h>

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

void take_bert_layer_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c) {
  take(json, "hidden_dropout_prob", c.hidden_dropout_prob, path);
  take(json, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, path);
  take(json, "type_vocab_size", c.type_vocab_size, path);
  take(json, "layer_norm_eps", c.layer_norm_eps, path);
  take_activation(json, "hidden_act", c.hidden_act, path);
  const std::string positions = json.value("position_embedding_type", "absolute");
  if (positions != "absolute")
    throw CheckpointError(path + ": position_embedding_type " + positions + "; mlm-train computes absolute positions");
  if (!json.value("tie_word_embeddings", true))
    throw CheckpointError(path + ": tie_word_embeddings is false; mlm-train's decoder is tied to the embeddings");
}

void put_bert_layer_fields(const MaskedLmImpl& model, nlohmann::json& j) {
  const auto& c = model.config();
  // HF "gelu" is the exact erf form; "gelu_new" is the tanh approximation.
  j["hidden_act"] = c.hidden_act == config::Activation::gelu ? "gelu" : "gelu_new";
  j["hidden_dropout_prob"] = c.hidden_dropout_prob;
  j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
  j["type_vocab_size"] = c.type_vocab_size;
  j["layer_norm_eps"] = c.layer_norm_eps;
  j["pad_token_id"] = model.pad_id();
  j["position_embedding_type"] = "absolute";
}

config::ModelConfig roberta_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig c) {
  c.architecture = json.value("model_type", "") == "xlm-roberta" ? config::Architecture::xlm_roberta
                                                                 : config::Architecture::roberta;
  c.objective = config::Objective::mlm;
  c.norm = config::NormPosition::post;
  take_common_fields(json, path, c);
  take_bert_layer_fields(json, path, c);
  return c;
}

std::string shape_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs) {
  struct ShapeField {
    const char* hf_key;
    int64_t ours, theirs;
  };
  // ELECTRA's embedding width (0 = hidden_size); the other architectures have none of their own.
  const auto embedding = [](const config::ModelConfig& c) -> int64_t {
    return c.architecture == config::Architecture::electra ? config::electra_embedding_size(c) : 0;
  };
  const ShapeField fields[] = {
      {"vocab_size", ours.vocab_size, theirs.vocab_size},
      {"embedding_size", embedding(ours), embedding(theirs)},
      {"hidden_size", ours.hidden_size, theirs.hidden_size},
      {"num_hidden_layers", ours.num_hidden_layers, theirs.num_hidden_layers},
      {"num_attention_heads", ours.num_attention_heads, theirs.num_attention_heads},
      {"intermediate_size", ours.intermediate_size, theirs.intermediate_size},
      {"max_position_embeddings", ours.max_position_embeddings, theirs.max_position_embeddings},
      {"type_vocab_size", ours.type_vocab_size, theirs.type_vocab_size},
      {"global_attn_every_n_layers", ours.global_attn_every_n_layers, theirs.global_attn_every_n_layers},
      {"local_attention", ours.local_attention, theirs.local_attention}};
  std::string differences;
  for (const auto& f : fields)
    if (f.theirs != f.ours)
      differences += fmt::format("{}{} {} (set model.{}: {})", differences.empty() ? "" : ", ", f.hf_key, f.theirs,
                                 f.hf_key, f.ours);
  return differences;
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

}  // namespace mlm::model

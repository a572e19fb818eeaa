// ModernBERT's config.json both ways: the ModernBertConfig fields mlm-train writes on export
// and reads on import (model.init_from, mlm-eval of an HF directory). transformers 5 writes
// layer_types and rope_parameters; 4.x wrote global_attn_every_n_layers and
// global_rope_theta / local_rope_theta: both are written, and either is read.
#include <fmt/format.h>

#include "mlm/model/hf/config_fields.h"
#include "mlm/model/modernbert/modernbert_config_json.h"

namespace mlm::model {
namespace {

std::string hf_activation(config::Activation act) {
  return act == config::Activation::gelu ? "gelu" : "gelu_pytorch_tanh";
}

std::string layer_type(const config::ModelConfig& c, int64_t layer) {
  return layer % c.global_attn_every_n_layers == 0 ? "full_attention" : "sliding_attention";
}

// layer_types as a period n (layer i global when i % n == 0), the only pattern computed here.
int64_t global_period(const nlohmann::json& types, int64_t layers, const std::string& path) {
  if (!types.is_array() || static_cast<int64_t>(types.size()) != layers)
    throw CheckpointError(fmt::format("{}: layer_types must list {} layers (num_hidden_layers), got {}", path,
                                      layers, types.dump()));
  config::ModelConfig c;
  for (c.global_attn_every_n_layers = 1; c.global_attn_every_n_layers <= std::max<int64_t>(layers, 1);
       ++c.global_attn_every_n_layers) {
    bool same = true;
    for (int64_t i = 0; i < layers && same; ++i) same = types[i] == layer_type(c, i);
    if (same) return c.global_attn_every_n_layers;
  }
  throw CheckpointError(path + ": layer_types " + types.dump() +
                        " is not global attention every n layers from layer 0, the pattern mlm-train computes");
}

// rope_parameters[layer_type].rope_theta; only the "default" rope is computed here.
void take_rope(const nlohmann::json& rope, const char* type, double& theta, const std::string& path) {
  if (!rope.contains(type) || rope[type].is_null()) return;
  const auto& p = rope[type];
  const std::string kind = p.value("rope_type", "default");
  if (kind != "default")
    throw CheckpointError(fmt::format("{}: rope_parameters.{}.rope_type is {}; mlm-train computes the default rope",
                                      path, type, kind));
  take(p, "rope_theta", theta, path);
}

}  // namespace

config::ModelConfig modernbert_config_from_hf(const nlohmann::json& json, const std::string& path,
                                              config::ModelConfig c) {
  c.architecture = config::Architecture::modernbert;
  take_common_fields(json, path, c);
  take(json, "initializer_cutoff_factor", c.initializer_cutoff_factor, path);
  take(json, "norm_eps", c.layer_norm_eps, path);
  take(json, "norm_bias", c.norm_bias, path);
  take(json, "attention_bias", c.attention_bias, path);
  take(json, "attention_dropout", c.attention_probs_dropout_prob, path);
  take(json, "local_attention", c.local_attention, path);
  take(json, "embedding_dropout", c.embedding_dropout, path);
  take(json, "mlp_bias", c.mlp_bias, path);
  take(json, "mlp_dropout", c.mlp_dropout, path);
  take(json, "decoder_bias", c.decoder_bias, path);
  take(json, "classifier_bias", c.classifier_bias, path);
  take_activation(json, "hidden_activation", c.hidden_act, path);
  take_activation(json, "classifier_activation", c.classifier_activation, path);
  take(json, "global_attn_every_n_layers", c.global_attn_every_n_layers, path);
  if (json.contains("layer_types") && !json["layer_types"].is_null())
    c.global_attn_every_n_layers = global_period(json["layer_types"], c.num_hidden_layers, path);
  take(json, "global_rope_theta", c.global_rope_theta, path);
  take(json, "local_rope_theta", c.local_rope_theta, path);
  if (json.contains("rope_parameters") && json["rope_parameters"].is_object()) {
    take_rope(json["rope_parameters"], "full_attention", c.global_rope_theta, path);
    take_rope(json["rope_parameters"], "sliding_attention", c.local_rope_theta, path);
  }
  require_tied_embeddings(json, path);
  c.objective = config::Objective::mlm;
  return c;
}

nlohmann::json modernbert_config_json(const MaskedLmImpl& model) {
  const auto& c = model.config();
  nlohmann::json layer_types = nlohmann::json::array();
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layer_types.push_back(layer_type(c, i));
  nlohmann::json j;
  j["architectures"] = {"ModernBertForMaskedLM"};
  j["model_type"] = "modernbert";
  put_common_fields(model, j);
  j["hidden_activation"] = hf_activation(c.hidden_act);
  j["initializer_cutoff_factor"] = c.initializer_cutoff_factor;
  j["norm_eps"] = c.layer_norm_eps;
  j["norm_bias"] = c.norm_bias;
  j["pad_token_id"] = model.pad_id();
  // The tokenizer files name [CLS], [SEP]; transformers' ModernBERT ids (50281...) would be
  // outside this vocabulary.
  j["bos_token_id"] = j["eos_token_id"] = j["cls_token_id"] = j["sep_token_id"] = nullptr;
  j["attention_bias"] = c.attention_bias;
  j["attention_dropout"] = c.attention_probs_dropout_prob;
  j["layer_types"] = layer_types;
  j["global_attn_every_n_layers"] = c.global_attn_every_n_layers;
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", c.global_rope_theta}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", c.local_rope_theta}}}};
  j["global_rope_theta"] = c.global_rope_theta;
  j["local_rope_theta"] = c.local_rope_theta;
  j["local_attention"] = c.local_attention;
  j["embedding_dropout"] = c.embedding_dropout;
  j["mlp_bias"] = c.mlp_bias;
  j["mlp_dropout"] = c.mlp_dropout;
  j["decoder_bias"] = c.decoder_bias;
  j["classifier_pooling"] = "cls";
  j["classifier_dropout"] = 0.0;
  j["classifier_bias"] = c.classifier_bias;
  j["classifier_activation"] = hf_activation(c.classifier_activation);
  j["sparse_prediction"] = false;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  return j;
}

}  // namespace mlm::model

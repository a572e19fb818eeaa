#include "mlm/model/bert/bert_config_json.h"

#include "mlm/model/hf/config_fields.h"

namespace mlm::model {

void take_bert_layer_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c) {
  take(json, "hidden_dropout_prob", c.hidden_dropout_prob, path);
  take(json, "attention_probs_dropout_prob", c.attention_probs_dropout_prob, path);
  take(json, "type_vocab_size", c.type_vocab_size, path);
  take(json, "layer_norm_eps", c.layer_norm_eps, path);
  take_activation(json, "hidden_act", c.hidden_act, path);
  const std::string positions = json.value("position_embedding_type", "absolute");
  if (positions != "absolute")
    throw CheckpointError(path + ": position_embedding_type " + positions + "; mlm-train computes absolute positions");
  require_tied_embeddings(json, path);
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

config::ModelConfig bert_config_from_hf(const nlohmann::json& json, const std::string& path, config::ModelConfig c) {
  c.architecture = config::Architecture::bert;
  take_common_fields(json, path, c);
  take_bert_layer_fields(json, path, c);
  c.norm = json.value("mlm_train_norm", "") == "pre" ? config::NormPosition::pre : config::NormPosition::post;
  return c;
}

nlohmann::json bert_config_json(const MaskedLmImpl& model) {
  const auto& c = model.config();
  const bool nsp = model.has_nsp_head();
  nlohmann::json j;
  j["architectures"] = {nsp ? "BertForPreTraining" : "BertForMaskedLM"};
  j["model_type"] = "bert";
  put_common_fields(model, j);
  put_bert_layer_fields(model, j);
  j["classifier_dropout"] = nullptr;
  j["use_cache"] = true;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  if (c.norm == config::NormPosition::pre) {
    // Not a BertConfig field: records why HF BERT cannot load this model faithfully.
    j["mlm_train_norm"] = "pre";
  }
  return j;
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

// The bos and eos ids are null, as for ModernBERT: the tokenizer files carry the special
// tokens, and RobertaConfig's defaults (0 and 2, fairseq's) would name pieces of another
// vocabulary.
nlohmann::json roberta_config_json(const MaskedLmImpl& model) {
  const bool xlm = model.config().architecture == config::Architecture::xlm_roberta;
  nlohmann::json j;
  j["architectures"] = {xlm ? "XLMRobertaForMaskedLM" : "RobertaForMaskedLM"};
  j["model_type"] = xlm ? "xlm-roberta" : "roberta";
  put_common_fields(model, j);
  put_bert_layer_fields(model, j);
  j["bos_token_id"] = j["eos_token_id"] = nullptr;
  j["classifier_dropout"] = nullptr;
  j["use_cache"] = true;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  return j;
}

}  // namespace mlm::model

#pragma once
// config.json of the BERT family (BertConfig, RobertaConfig / XLMRobertaConfig; ElectraConfig
// builds on the same layer fields), both ways.
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The fields BertConfig, RobertaConfig and ElectraConfig share beyond the common ones
/// (activation, dropouts, token types, LayerNorm epsilon, pad id, absolute positions), read /
/// written; reading refuses relative positions and an untied decoder (CheckpointError).
void take_bert_layer_fields(const nlohmann::json& json, const std::string& path, config::ModelConfig& c);
void put_bert_layer_fields(const MaskedLmImpl& model, nlohmann::json& json);

/// BertConfig ("mlm_train_norm": "pre" marks a pre-LN export) on top of `base`.
config::ModelConfig bert_config_from_hf(const nlohmann::json& json, const std::string& path, config::ModelConfig base);
nlohmann::json bert_config_json(const MaskedLmImpl& model);

/// RobertaConfig / XLMRobertaConfig: BertConfig's fields under model_type roberta or
/// xlm-roberta, on top of `base`.
config::ModelConfig roberta_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig base);
nlohmann::json roberta_config_json(const MaskedLmImpl& model);

}  // namespace mlm::model

#pragma once
// DebertaV2Config, config.json both ways (deberta_config_json.cpp).
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The DebertaV2Config fields of config.json (model_type deberta-v2) on top of `base`;
/// CheckpointError naming the key for an option mlm-train does not compute (conv_kernel_size,
/// an attention_head_size apart from hidden_size / heads, a pos_att_type term other than c2p
/// and p2c, legacy false, a pooler activation other than hidden_act).
config::ModelConfig deberta_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig base);

/// The DebertaV2Config of a deberta_v2 model.
nlohmann::json deberta_config_json(const MaskedLmImpl& model);

}  // namespace mlm::model

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
/// and p2c, legacy false with an embedding_size apart from hidden_size, a pooler activation
/// other than hidden_act). legacy false is read (the head's keys are renamed on loading).
config::ModelConfig deberta_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig base);

/// The DeBERTa options in which a config.json (`theirs`) differs from the model's (`ours`):
/// "position_buckets 256 (set model.position_buckets: 16), ..." or empty. The weights alone do
/// not tell every one apart (pos_att_type under share_att_key has no tensor of its own).
std::string deberta_option_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs);

/// The DebertaV2Config of a deberta_v2 model.
nlohmann::json deberta_config_json(const MaskedLmImpl& model);

}  // namespace mlm::model

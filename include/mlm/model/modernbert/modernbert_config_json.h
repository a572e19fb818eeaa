#pragma once
// ModernBertConfig, config.json both ways (modernbert_config_json.cpp).
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The ModernBertConfig fields of config.json (model_type modernbert) on top of `base`.
config::ModelConfig modernbert_config_from_hf(const nlohmann::json& json, const std::string& path,
                                              config::ModelConfig base);

/// The ModernBertConfig of a modernbert model.
nlohmann::json modernbert_config_json(const MaskedLmImpl& model);

}  // namespace mlm::model

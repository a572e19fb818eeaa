#pragma once
// ELECTRA's config.json (ElectraConfig) both ways. The pair's directory (DIR/generator:
// ElectraForMaskedLM, DIR/discriminator: ElectraForPreTraining, as Google's checkpoints are laid
// out on the hub) is rtd/rtd_directory.h's.
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The ElectraConfig of one network: `network`'s shape (a generator's own, or the pair's
/// discriminator), `architecture` ElectraForMaskedLM or ElectraForPreTraining.
nlohmann::json electra_config_json(const MaskedLmImpl& network, const std::string& architecture);

/// The ElectraConfig fields of config.json (model_type electra) on top of `base`: architecture
/// electra, objective mlm. CheckpointError naming the file for an ElectraForPreTraining alone
/// (a discriminator has no masked-LM head: open the pair) or a field mlm-train does not compute.
config::ModelConfig electra_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig base);

}  // namespace mlm::model

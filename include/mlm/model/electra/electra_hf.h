#pragma once
// ELECTRA as Hugging Face directories: config.json (ElectraConfig) both ways, the pair an
// export writes (DIR/generator: ElectraForMaskedLM, DIR/discriminator: ElectraForPreTraining,
// as Google's checkpoints are laid out on the hub), and model.init_from reading such a pair.
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/hf/weight_format.h"

namespace mlm::model {

/// The ElectraConfig of one network: `network`'s shape (a generator's own, or the pair's
/// discriminator), `architecture` ElectraForMaskedLM or ElectraForPreTraining.
nlohmann::json electra_config_json(const MaskedLmImpl& network, const std::string& architecture);

/// The ElectraConfig fields of config.json (model_type electra) on top of `base`: architecture
/// electra, objective mlm. CheckpointError naming the file for an ElectraForPreTraining alone
/// (a discriminator has no masked-LM head: open the pair) or a field mlm-train does not compute.
config::ModelConfig electra_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig base);

/// DIR/generator/config.json and DIR/discriminator/config.json both exist.
bool is_electra_pair_dir(const std::string& dir);

/// The objective rtd config of a pair directory, on top of `base`: the discriminator's shape,
/// the generator ratios from the two widths and depths, its embedding sharing kept from `base`.
/// CheckpointError naming the file for a generator whose heads or intermediate size are not
/// those mlm-train derives, or a pair whose vocabularies differ (config.json vocab_size, or
/// the tokenizer files of the two directories).
config::ModelConfig electra_pair_config(const std::string& dir, config::ModelConfig base);

/// Writes DIR/generator and DIR/discriminator (config.json and weights, each file through a
/// temporary renamed into place); DIR must exist.
void write_electra_pair(ElectraForPreTrainingImpl& model, const std::string& dir, WeightFormat format);

/// model.init_from for objective rtd: loads a pair directory into `model`, its two configs
/// checked against the model's shapes (one CheckpointError listing each difference with the
/// key to change).
void init_electra_pair(ElectraForPreTrainingImpl& model, const std::string& dir);

}  // namespace mlm::model

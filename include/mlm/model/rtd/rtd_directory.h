#pragma once
// The pair as a directory of two Hugging Face models, as mlm-export writes it and Google's
// ELECTRA checkpoints lie on the hub: DIR/generator (the generator's masked LM) and
// DIR/discriminator (the discriminator with its RTD head and the shared tables; its config.json
// carries "embedding_sharing": "shared" | "gdes"). Both ways, for every architecture with
// rtd_networks(); ArchitectureSpec's defaults route write_hf, init_from, owns_directory,
// directory_config and tokenizer_directory here.
#include <string>
#include <vector>

#include "mlm/config/sections/model.h"
#include "mlm/model/hf/weight_format.h"
#include "mlm/model/pretrained/new_token_rows.h"
#include "mlm/model/rtd/rtd_pair.h"

namespace mlm::model {

/// DIR/generator/config.json and DIR/discriminator/config.json exist and the generator's
/// model_type is `spec`'s.
bool is_rtd_pair_directory(const ArchitectureSpec& spec, const std::string& dir);

/// The objective rtd config of a pair directory on top of `base`: the discriminator's shape,
/// the generator ratios from the two widths and depths, the embedding sharing the
/// discriminator's config.json names (else `base`'s). CheckpointError naming the file for a
/// network or a pair whose shape cannot be built, vocabularies that differ (config.json
/// vocab_size, or the tokenizer files of the two directories), or a generator whose heads or
/// intermediate size are not those mlm-train derives.
config::ModelConfig rtd_pair_config(const ArchitectureSpec& spec, const std::string& dir, config::ModelConfig base);

/// Writes DIR/generator and DIR/discriminator (config.json and weights); DIR must exist.
/// Returns the two directories (each gets the tokenizer files).
std::vector<std::string> write_rtd_pair(RtdPairImpl& model, const std::string& dir, WeightFormat format);

/// model.init_from of a pair directory: false when `dir` is none of `spec`'s. Otherwise loads it
/// into `model`, its two configs checked against the model's shapes and options (one
/// CheckpointError listing each difference with the key to change); CheckpointError for a
/// model that is one network or tokens to add.
bool init_from_rtd_pair_directory(const ArchitectureSpec& spec, MaskedLmImpl& model, const std::string& dir,
                                  const std::vector<NewTokenRow>& new_tokens);

/// The parameters of the gdes delta (vocab_rows x E under gdes, else 0), for
/// ArchitectureSpec::estimated_parameters of a pair.
double rtd_delta_parameters(const config::ModelConfig& config, double vocab_rows);

}  // namespace mlm::model

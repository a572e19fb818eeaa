#pragma once
// The model half of a Hugging Face export: config.json and the weights, a directory that
// `transformers` loads with AutoModelForMaskedLM / BertForPreTraining (the NSP head present).
// The tokenizer files come from the text layer (mlm/text/hf_tokenizer_files.h).
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/model/bert.h"
#include "mlm/model/weight_format.h"

namespace mlm::model {

/// config.json of the model: BertConfig fields, model_type bert, architectures.
nlohmann::json hf_config_json(const BertForPreTraining& model);

/// Writes config.json and the weights (HF key names, vocabulary unpadded) into the existing
/// directory `output_dir`, each file through a temporary renamed into place. CheckpointError
/// when a file cannot be written. Warns for pre-LN, which HF BERT cannot load.
void write_hf_model(BertForPreTraining& model, const std::string& output_dir, WeightFormat format);

}  // namespace mlm::model

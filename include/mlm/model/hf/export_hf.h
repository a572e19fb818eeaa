#pragma once
// The model half of a Hugging Face export: config.json and the weights, a directory that
// `transformers` loads with AutoModelForMaskedLM (BERT: also BertForPreTraining with the NSP
// head present; RoBERTa / XLM-R: RobertaForMaskedLM / XLMRobertaForMaskedLM; ModernBERT:
// ModernBertForMaskedLM). The tokenizer files come from the text
// layer (mlm/text/hf/hf_tokenizer_files.h).
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mlm/model/hf/weight_format.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// config.json of the model: BertConfig or ModernBertConfig fields, model_type, architectures.
nlohmann::json hf_config_json(MaskedLm model);

/// The ModernBertConfig fields of a modernbert model (modernbert_config.cpp).
nlohmann::json modernbert_config_json(const MaskedLmImpl& model);

/// Writes config.json and the weights (HF key names, vocabulary unpadded) into the existing
/// directory `output_dir`, each file through a temporary renamed into place; an ELECTRA pair
/// (objective rtd) as output_dir/generator and output_dir/discriminator. Returns the
/// directories that hold a model (for the tokenizer files). CheckpointError when a file cannot
/// be written. Warns for pre-LN, which HF BERT cannot load.
std::vector<std::string> write_hf_model(MaskedLm model, const std::string& output_dir, WeightFormat format);

/// config.json and the weights in `format` into the existing directory `dir`, atomically each.
void write_hf_files(const std::string& dir, const nlohmann::json& config_json, const TensorDict& weights,
                    WeightFormat format);

}  // namespace mlm::model

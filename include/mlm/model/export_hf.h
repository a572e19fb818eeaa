#pragma once
// Hugging Face export: a directory that `transformers` loads with
// BertForMaskedLM.from_pretrained (BertForPreTraining when the model has the NSP head) and
// AlbertTokenizer.from_pretrained (the sentencepiece tokenizer with BERT's [CLS]/[SEP] layout).
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/model/bert.h"
#include "mlm/text/vocab_info.h"

namespace mlm::model {

/// What the export needs to know about the tokenizer (mlm::text::Tokenizer provides it).
struct ExportTokenizer {
  std::string model_file;   // sentencepiece .model, copied as tokenizer.model and spiece.model
  text::SpecialIds ids;     // pad is the config's pad_token_id; must match the model's
  int64_t vocab_size = 0;   // must equal the model's (unpadded) vocabulary
};

/// config.json of the model: BertConfig fields, model_type bert, architectures.
nlohmann::json hf_config_json(const BertForPreTraining& model);

/// Writes `output_dir` (created if missing): config.json, pytorch_model.bin (HF keys,
/// torch.load-able), tokenizer.model + spiece.model (copies; AlbertTokenizer reads spiece.model),
/// tokenizer_config.json and special_tokens_map.json. CheckpointError when the tokenizer does
/// not fit the model or a file cannot be written. Warns for pre-LN, which HF BERT cannot load.
void export_hf(BertForPreTraining& model, const ExportTokenizer& tokenizer, const std::string& output_dir);

}  // namespace mlm::model

#pragma once
// The model half of a Hugging Face export: config.json and the weights, a directory that
// `transformers` loads with AutoModelForMaskedLM (BERT: also BertForPreTraining with the NSP
// head present); an ELECTRA pair as two such directories. The tokenizer files come from the
// text layer (mlm/text/hf/hf_tokenizer_files.h).
#include <string>
#include <vector>

#include "mlm/model/hf/weight_format.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// Writes `model`'s export into the existing directory `output_dir` as its architecture lays
/// it out (ArchitectureSpec::write_hf), each file through a temporary renamed into place.
/// Returns the directories that hold a model (for the tokenizer files). CheckpointError when
/// a file cannot be written.
std::vector<std::string> write_hf_model(MaskedLm model, const std::string& output_dir, WeightFormat format);

}  // namespace mlm::model

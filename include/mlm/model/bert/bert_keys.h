#pragma once
// The keys of the architectures built from BERT's layers in this folder: bert, roberta and
// xlm_roberta read only the model.* keys every architecture shares. Torch-free: part of the
// config library (src/model/bert/bert_keys.cpp).
#include "mlm/config/enums.h"

namespace mlm::config {

class ArchitectureKeys;

/// RoBERTa and XLM-R: one body, BERT's layers with fairseq's position numbering.
inline bool is_roberta(Architecture architecture) {
  return architecture == Architecture::roberta || architecture == Architecture::xlm_roberta;
}

/// bert's, roberta's and xlm_roberta's keys (config/architecture_keys.h).
const ArchitectureKeys& bert_keys();
const ArchitectureKeys& roberta_keys();
const ArchitectureKeys& xlm_roberta_keys();

}  // namespace mlm::config

#pragma once
// DeBERTa-v2/v3's architecture spec (DebertaV2ForMaskedLM: disentangled attention over
// relative positions).
#include "mlm/model/architecture_spec.h"

namespace mlm::model {

const ArchitectureSpec& deberta_v2_spec();

}  // namespace mlm::model

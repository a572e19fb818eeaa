#pragma once
// ModernBERT's architecture spec (ModernBertForMaskedLM: RoPE, GeGLU, alternating global and
// local attention).
#include "mlm/model/architecture_spec.h"

namespace mlm::model {

const ArchitectureSpec& modernbert_spec();

}  // namespace mlm::model

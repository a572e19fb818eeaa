#pragma once
// ELECTRA's architecture spec: ElectraForMaskedLM (objective mlm) or the generator and
// discriminator pair (objective rtd), whose Hugging Face form is a directory of two
// (generator/, discriminator/).
#include "mlm/model/architecture_spec.h"

namespace mlm::model {

const ArchitectureSpec& electra_spec();

}  // namespace mlm::model

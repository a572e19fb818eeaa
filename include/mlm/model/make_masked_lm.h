#pragma once
// The factory of the MaskedLm seam: the one place that knows every architecture. A new
// architecture (an encoder with its tied head, behind MaskedLmImpl) is added here.
#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The model.architecture of `config`, initialised (seed with torch::manual_seed first).
MaskedLm make_masked_lm(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

}  // namespace mlm::model

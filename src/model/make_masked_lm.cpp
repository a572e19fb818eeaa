#include "mlm/model/make_masked_lm.h"

#include "mlm/model/architectures.h"

namespace mlm::model {

MaskedLm make_masked_lm(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id) {
  return architecture_spec(config.architecture).build(config, vocab_size, pad_id);
}

}  // namespace mlm::model

#include "mlm/train/tools/bench/model_flops.h"

#include "mlm/model/architectures.h"

namespace mlm::train::bench {

double forward_flops_per_token(const config::ModelConfig& model, int64_t seq_len, int64_t vocab,
                               double mlm_probability) {
  return model::architecture_spec(model.architecture).forward_flops_per_token(model, seq_len, vocab, mlm_probability);
}

}  // namespace mlm::train::bench

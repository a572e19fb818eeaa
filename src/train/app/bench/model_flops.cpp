#include "mlm/train/app/bench/model_flops.h"

namespace mlm::train::bench {

double forward_flops_per_token(const config::ModelConfig& model, int64_t seq_len, int64_t vocab,
                               double mlm_probability) {
  const double L = static_cast<double>(model.num_hidden_layers);
  const double H = static_cast<double>(model.hidden_size);
  const double I = static_cast<double>(model.intermediate_size);
  const double S = static_cast<double>(seq_len);
  const double V = static_cast<double>(vocab);
  const double p = model.sparse_head ? mlm_probability : 1.0;
  return 2 * L * (4 * H * H + 2 * H * I) + 4 * L * S * H + 2 * p * (H * H + H * V);
}

}  // namespace mlm::train::bench

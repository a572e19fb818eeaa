#pragma once
// The optim.* section: AdamW and gradient clipping.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <array>

namespace mlm::config {

struct OptimConfig {
  double learning_rate = 1e-4;             // peak learning rate
  std::array<double, 2> betas = {0.9, 0.999};  // AdamW betas
  double eps = 1e-6;                       // AdamW epsilon
  double weight_decay = 0.01;              // decoupled; never on biases and LayerNorm
  double max_grad_norm = 1.0;              // global-norm clipping (0 = off)

  template <class V>
  void visit(V& v) {
    v("learning_rate", learning_rate);
    v("betas", betas);
    v("eps", eps);
    v("weight_decay", weight_decay);
    v("max_grad_norm", max_grad_norm);
  }
};

}  // namespace mlm::config

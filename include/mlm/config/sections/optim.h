#pragma once
// The optim.* section: the optimizer and gradient clipping.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
// A key named after one optimizer (lamb_*, stable_adamw_*) set to anything but its default
// under another optim.type is refused by validation, as it would silently do nothing.
#include <array>

#include "mlm/config/enums.h"

namespace mlm::config {

struct OptimConfig {
  OptimizerType type = OptimizerType::adamw;  // adamw | lamb (NVIDIA's BERT recipe: Adam
                                           // moments, a per-tensor trust ratio) | stable_adamw
                                           // (ModernBERT's: AdamW with update clipping)
  double learning_rate = 1e-4;             // peak learning rate
  std::array<double, 2> betas = {0.9, 0.999};  // Adam betas (all three optimizers)
  double eps = 1e-6;                       // Adam epsilon (all three)
  double weight_decay = 0.01;              // decoupled; never on biases and LayerNorm
  double max_grad_norm = 1.0;              // global-norm clipping (0 = off); LAMB's global
                                           // gradient pre-normalisation
  bool lamb_bias_correction = true;        // lamb: divide the moments by 1 - beta^t
  bool lamb_adapt_no_decay = false;        // lamb: the trust ratio on biases and LayerNorm too
                                           // (apex's use_nvlamb); NVIDIA's recipe excludes them
  bool stable_adamw_decouple_lr = true;    // stable_adamw: weight decay scaled by
                                           // lr / learning_rate, not by lr (ModernBERT's
                                           // decoupled_stableadamw); weight_decay is then the
                                           // decay per step at the peak (ModernBERT: 1e-5)

  template <class V>
  void visit(V& v) {
    v("type", type);
    v("learning_rate", learning_rate);
    v("betas", betas);
    v("eps", eps);
    v("weight_decay", weight_decay);
    v("max_grad_norm", max_grad_norm);
    v("lamb_bias_correction", lamb_bias_correction);
    v("lamb_adapt_no_decay", lamb_adapt_no_decay);
    v("stable_adamw_decouple_lr", stable_adamw_decouple_lr);
  }
};

}  // namespace mlm::config

#pragma once
// A micro-batch loss in place of the MLM head's own (distillation: train/distill/distiller.h).
// The step hands it each micro-batch, differentiates the loss it returns, and carries its
// terms, summed over the step and the ranks, after its own sums (DeviceStepStats::outcome).
#include <torch/torch.h>

#include <cstdint>

#include "mlm/model/masked_lm.h"

namespace mlm::train {

struct MicroBatchLossValue {
  model::MlmOutput out;  // the model's: mlm_loss_sum and mlm_correct at the masked positions
  torch::Tensor loss;    // to differentiate
  torch::Tensor terms;   // [terms()] float64, detached: the values the step logs
};

class MicroBatchLoss {
 public:
  virtual ~MicroBatchLoss() = default;
  virtual int64_t terms() const = 0;
  /// The loss of `model` on `inputs`; `masked` and `tokens`: the step's masked positions and
  /// real tokens on all ranks (at least 1).
  virtual MicroBatchLossValue forward(model::MaskedLm model, const model::MlmInputs& inputs, double masked,
                                      double tokens) = 0;
};

}  // namespace mlm::train

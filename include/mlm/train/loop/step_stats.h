#pragma once
// A training step's statistics. The step leaves what only the device knows (loss sums, correct
// counts, gradient norm, skipped) on the device, so it never waits for the device; the loop
// reads the steps it has not read yet all at once, at a logged step or when it must
// (training_loop.h).
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mlm/model/masked_lm.h"
#include "mlm/train/loop/rtd_counts.h"

namespace mlm::train {

/// A step's outcome, summed over its micro-batches and all ranks.
struct StepStats {
  int64_t step = 0;
  double lr = 0;
  double grad_norm = 0;     // before clipping
  bool skipped = false;     // non-finite loss or gradient: no update
  double loss_scale = 0;    // fp16: the loss scale the step ran at (0: no scaling)
  int64_t num_masked = 0;   // selected positions
  int64_t pairs = 0;        // sentence pairs (NSP/SOP)
  int64_t tokens = 0;       // non-padding tokens
  int64_t sequences = 0;    // rows (the global batch; it grows during batch-size warmup)
  double rtd_weight = 0;    // lambda of objective rtd (0: no rtd term)
  double loss_sum = 0, correct = 0, nsp_loss_sum = 0, nsp_correct = 0;
  RtdCounts rtd;            // objective rtd only
  double loss = 0;          // MLM (+ NSP/SOP, + lambda * RTD) loss of the whole step
  double mlm_accuracy = 0;  // over the step's selected positions
  bool distilled = false;   // distill.teacher: the next four were read
  double distill_kl = 0, distill_cos = 0, distill_relation = 0;  // the step's losses (distiller.h)
  double teacher_s = 0;     // the teacher's forward seconds, summed over ranks
};

/// What a step's losses are divided by: its selected positions (or sentence pairs) on all
/// ranks, at least 1 so that an empty step divides nothing by zero.
inline double loss_divisor(int64_t count) { return std::max(static_cast<double>(count), 1.0); }

/// A step's loss from its summed losses (a double, or a tensor on the device): the MLM sum per
/// selected position, plus the NSP/SOP sum per sentence pair when the step has pairs, plus
/// lambda times the RTD sum per non-padding token under objective rtd.
template <class T>
T step_loss(const T& mlm_loss_sum, const T& nsp_loss_sum, const T& rtd_loss_sum, const StepStats& counts) {
  T loss = mlm_loss_sum / loss_divisor(counts.num_masked);
  if (counts.pairs > 0) loss = loss + nsp_loss_sum / loss_divisor(counts.pairs);
  if (counts.rtd_weight > 0) loss = loss + rtd_loss_sum * (counts.rtd_weight / loss_divisor(counts.tokens));
  return loss;
}

/// The step's sums as the device holds them: loss_sum, correct, nsp_loss_sum, nsp_correct,
/// then RtdCounts' fields.
inline constexpr int64_t kStepSums = 4 + RtdCounts::kFields;
inline constexpr int64_t kRtdSums = 4;  // where RtdCounts' fields start

/// An MlmOutput's rtd_* as RtdCounts::kFields float64 values on its device (detached), in
/// RtdCounts' order.
torch::Tensor rtd_values(const model::MlmOutput& out);

/// A step as TrainingStep::run leaves it: the host-known part of its stats (step, lr,
/// num_masked, pairs, tokens) and the rest still on the device.
struct DeviceStepStats {
  StepStats known;
  /// [kStepSums + 3] float64 on the device: the step's sums, grad_norm, skipped (0 or 1),
  /// loss_scale; then, with a distiller, its kDistillTerms (distill/distiller.h).
  torch::Tensor outcome;
};

/// The steps' complete stats, read from the device in one transfer.
std::vector<StepStats> read_steps(const std::vector<DeviceStepStats>& steps);

/// How many times read_steps() has read the device in this process (tests).
int64_t step_reads();

}  // namespace mlm::train

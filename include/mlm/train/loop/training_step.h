#pragma once
// One training step: the code mlm-train runs and mlm-bench times, in three parts.
//   collect_step      the step's micro-batches (train.grad_accum_steps of them);
//   forward_backward  each micro-batch's loss divided by the masked count of the whole step on
//                     all ranks, so accumulation and data parallelism equal one big batch;
//   apply_update      gradients summed across ranks, clipped to optim.max_grad_norm, then a
//                     step of optim.type, or none (skipped) when the loss or the norm is not
//                     finite. Under fp16 the backward pass runs on the loss times a dynamic
//                     scale, which the update divides out (loss_scaler.h).
// Nothing in a step waits for the device: the loss sums, the norm, the clip divisor and the
// skip decision are tensors the optimizer's kernel reads there, and the step's statistics stay
// there until the loop reads them (step_stats.h).
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/dist/gradient_reducer.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/model/masked_lm.h"
#include "mlm/train/loop/loss_scaler.h"
#include "mlm/train/loop/micro_batch_loss.h"
#include "mlm/train/loop/step_stats.h"
#include "mlm/train/optim/optimizer.h"

namespace mlm::train {

/// One step's micro-batches and this rank's counts in them.
struct StepBatches {
  std::vector<masking::MaskedBatch> micro_batches;
  double masked = 0;  // selected positions
  double pairs = 0;   // sentence pairs (NSP/SOP)
  double tokens = 0;  // non-padding tokens
  double sequences = 0;  // rows

  explicit StepBatches(std::vector<masking::MaskedBatch> batches);
};

/// The next `count` batches of the train split (which never ends).
StepBatches collect_step(masking::BatchStream& stream, int64_t count);

/// The model's forward pass over one batch on `device`, autocast to `compute_dtype` (kFloat32: none);
/// `sample_seed`: objective rtd's sampling seed (MlmInputs::sample_seed).
model::MlmOutput forward_batch(model::MaskedLm model,
                                const masking::MaskedBatch& batch, const torch::Device& device,
                                torch::Dtype compute_dtype, std::optional<uint64_t> sample_seed = std::nullopt);

/// Seconds in each part of a step (mlm-bench); the device is synchronised at each boundary.
struct StepTimes {
  double data = 0, forward = 0, backward = 0, update = 0;
};

/// Called after the backward passes, before the gradients are reduced (tests poison one).
using GradientHook =
    std::function<void(int64_t step, const std::vector<torch::Tensor>& params)>;

class TrainingStep {
 public:
  /// optim.type over the model's parameters (optim.*); with more than one rank in `comm`, their
  /// gradients are summed in buckets of distributed.bucket_mb. `extra`: trained parameters
  /// outside the model (distillation's projection), after the model's in each group.
  TrainingStep(model::MaskedLm model, const config::RunConfig& config,
               std::shared_ptr<dist::Communicator> comm, torch::Dtype compute_dtype,
               const torch::nn::Module* extra = nullptr);
  ~TrainingStep();

  /// Trains step `step` at learning rate `lr` (collective: every rank calls it); its outcome
  /// is left on the device (read_steps() reads it).
  DeviceStepStats run(int64_t step, double lr, const StepBatches& batches,
                      StepTimes* times = nullptr);

  /// The parts of run(), in order, given the step's counts on all ranks (`counts`:
  /// num_masked, pairs). forward_backward keeps the step's loss sums on the device;
  /// apply_update sums them across ranks, decides the skip and the clip divisor on the
  /// device, steps, and returns the outcome (DeviceStepStats::outcome).
  void forward_backward(const StepBatches& batches, const StepStats& counts, StepTimes* times);
  torch::Tensor apply_update(const StepStats& counts, StepTimes* times);

  void set_gradient_hook(GradientHook hook) { gradient_hook_ = std::move(hook); }
  /// A micro-batch loss in place of the MLM one (distill.teacher: distill/distiller.h), whose
  /// terms the outcome carries after the rest (DeviceStepStats::outcome).
  void set_distiller(std::shared_ptr<MicroBatchLoss> distiller) { distiller_ = std::move(distiller); }
  /// Takes over the optimizer moments and step counts of `previous` (a step over the same
  /// model, as the next phase of a run builds it), and its loss scale; its own hyperparameters
  /// stay its config's.
  void take_optimizer_state(TrainingStep& previous);
  /// The optimizer whose state a checkpoint saves and a resume restores.
  TrainingOptimizer& optimizer() { return *optimizer_; }
  /// fp16's loss scaler, whose state a checkpoint saves too; null in fp32 and bf16.
  LossScaler* loss_scaler() { return scaler_.get(); }

 private:
  void synchronize() const;

  model::MaskedLm model_;
  std::unique_ptr<TrainingOptimizer> optimizer_;
  torch::Tensor pending_sums_;  // forward_backward -> apply_update: [kStepSums] float64, device
  std::vector<torch::Tensor> params_;
  std::shared_ptr<dist::Communicator> comm_;
  std::unique_ptr<dist::GradientReducer> reducer_;
  std::unique_ptr<LossScaler> scaler_;  // fp16 only
  torch::Device device_;
  torch::Dtype compute_dtype_;
  double max_grad_norm_;
  double rtd_weight_;  // lambda of objective rtd, else 0
  GradientHook gradient_hook_;
  std::shared_ptr<MicroBatchLoss> distiller_;
  torch::Tensor pending_distill_;  // [distiller_->terms()] float64, device, with a distiller
};

}  // namespace mlm::train

#include "mlm/train/loop/training_step.h"

#include <torch/cuda.h>

#include "mlm/train/loop/autocast.h"
#include "mlm/train/loop/batch_tensors.h"
#include "mlm/train/optim/grad_clip.h"
#include "mlm/train/optim/optimizer.h"
#include "mlm/util/elapsed.h"

namespace mlm::train {

StepBatches::StepBatches(std::vector<masking::MaskedBatch> batches)
    : micro_batches(std::move(batches)) {
  for (const auto& batch : micro_batches) {
    masked += static_cast<double>(batch.num_masked());
    pairs += static_cast<double>(batch.nsp_labels.size());
    tokens += static_cast<double>(count_tokens(batch));
    sequences += static_cast<double>(batch.batch_size);
  }
}

StepBatches collect_step(masking::BatchStream& stream, int64_t count) {
  std::vector<masking::MaskedBatch> batches;
  for (int64_t m = 0; m < count; ++m) {
    auto batch = stream.next();
    // The train split never ends (epoch after epoch; an empty epoch is a DataError).
    if (!batch) throw std::logic_error("the train split ended");
    batches.push_back(std::move(*batch));
  }
  return StepBatches(std::move(batches));
}

model::MlmOutput forward_batch(model::MaskedLm model,
                                const masking::MaskedBatch& batch, const torch::Device& device,
                                torch::Dtype compute_dtype, std::optional<uint64_t> sample_seed) {
  auto inputs = to_bert_inputs(batch, device);
  inputs.sample_seed = sample_seed;
  AutocastScope autocast(compute_dtype, device);
  return model->forward(inputs);
}

TrainingStep::TrainingStep(model::MaskedLm model, const config::RunConfig& config,
                           std::shared_ptr<dist::Communicator> comm, torch::Dtype compute_dtype,
                           const torch::nn::Module* extra)
    : model_(std::move(model)),
      optimizer_(make_optimizer(*model_, config.optim, extra)),
      params_(split_parameters(*model_, extra).all()),
      comm_(std::move(comm)),
      device_(comm_->device()),
      compute_dtype_(compute_dtype),
      max_grad_norm_(config.optim.max_grad_norm),
      rtd_weight_(config.model.objective == config::Objective::rtd ? config.model.rtd_weight : 0.0) {
  if (comm_->world_size() > 1) {
    // No overlap with activation checkpointing: its nested backward passes run accumulators
    // the outer graph does not show, some more than once (gradient_reducer.h).
    reducer_ = std::make_unique<dist::GradientReducer>(comm_, params_, config.distributed.bucket_mb,
                                                       !config.model.activation_checkpointing);
  }
  if (compute_dtype_ == torch::kHalf) {
    scaler_ = std::make_unique<LossScaler>(config.train.loss_scale_init, config.train.loss_scale_growth_interval,
                                           device_);
  }
}

TrainingStep::~TrainingStep() = default;

void TrainingStep::take_optimizer_state(TrainingStep& previous) {
  optimizer_->take_state_from(*previous.optimizer_);
  if (scaler_ && previous.scaler_) scaler_->restore(previous.scaler_->state());
}

void TrainingStep::synchronize() const {
  if (device_.is_cuda()) torch::cuda::synchronize();
}

DeviceStepStats TrainingStep::run(int64_t step, double lr, const StepBatches& batches,
                                  StepTimes* times) {
  DeviceStepStats stats;
  stats.known.step = step;
  stats.known.lr = lr;
  stats.known.rtd_weight = rtd_weight_;
  // The loss normaliser: the whole step's selected positions (and sentence pairs), all ranks.
  const auto counts = comm_->sum_across_ranks(
      {batches.masked, batches.pairs, batches.tokens, batches.sequences});
  stats.known.num_masked = static_cast<int64_t>(counts[0]);
  stats.known.pairs = static_cast<int64_t>(counts[1]);
  stats.known.tokens = static_cast<int64_t>(counts[2]);
  stats.known.sequences = static_cast<int64_t>(counts[3]);
  set_learning_rate(*optimizer_, lr);
  forward_backward(batches, stats.known, times);
  if (gradient_hook_) gradient_hook_(step, params_);
  stats.outcome = apply_update(stats.known, times);
  return stats;
}

void TrainingStep::forward_backward(const StepBatches& batches, const StepStats& counts,
                                    StepTimes* times) {
  const double masked = loss_divisor(counts.num_masked);
  const double pairs = loss_divisor(counts.pairs);
  const double rtd_scale = counts.rtd_weight / loss_divisor(counts.tokens);
  optimizer_->zero_grad();
  // The step's sums stay tensors on the device (no host read per micro-batch), kStepSums of
  // them (step_stats.h).
  auto sums = torch::zeros({kStepSums}, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
  if (distiller_) pending_distill_ = torch::zeros({distiller_->terms()}, sums.options());
  for (const auto& batch : batches.micro_batches) {
    auto start = SteadyClock::now();
    const auto distilled = distiller_ ? distiller_->forward(model_, to_bert_inputs(batch, device_), masked,
                                                            loss_divisor(counts.tokens))
                                      : MicroBatchLossValue{};
    if (distiller_) pending_distill_.add_(distilled.terms);
    const auto out = distiller_ ? distilled.out : forward_batch(model_, batch, device_, compute_dtype_);
    auto loss = distiller_ ? distilled.loss : out.mlm_loss_sum / masked;
    auto as_double = [](const torch::Tensor& t) { return t.detach().to(torch::kFloat64).view({1}); };
    sums.narrow(0, 0, 2).add_(torch::cat({as_double(out.mlm_loss_sum), as_double(out.mlm_correct)}));
    if (out.nsp_loss_sum.defined()) {
      loss = loss + out.nsp_loss_sum / pairs;
      sums.narrow(0, 2, 2).add_(torch::cat({as_double(out.nsp_loss_sum), as_double(out.nsp_correct)}));
    }
    if (out.rtd_loss_sum.defined()) {
      loss = loss + out.rtd_loss_sum * rtd_scale;
      sums.narrow(0, kRtdSums, RtdCounts::kFields).add_(rtd_values(out));
    }
    if (times) times->forward += seconds_since(start);

    start = SteadyClock::now();
    const auto root = scaler_ ? scaler_->scaled(loss) : loss;
    // The last backward starts each bucket's all-reduce once its gradients are final; not
    // with a gradient hook, which edits them after backward.
    if (reducer_ && &batch == &batches.micro_batches.back() && !gradient_hook_) {
      reducer_->prepare_for_backward(root);
    }
    root.backward();
    if (times) {
      synchronize();
      times->backward += seconds_since(start);
    }
  }
  pending_sums_ = sums;
}

torch::Tensor TrainingStep::apply_update(const StepStats& counts, StepTimes* times) {
  const auto start = SteadyClock::now();
  if (reducer_) reducer_->finish();
  auto sums = pending_sums_;
  if (comm_->world_size() > 1) comm_->all_reduce_sum(sums);
  // Every rank holds the same summed gradients and sums now, so the norm and the skip agree.
  // Both are decided here on the device, in float64 as read_steps() computes the loss.
  // Under fp16 the gradients are the loss scale times the true ones: the norm is read through
  // the scale, and the optimizer's kernel divides by it together with the clip divisor.
  auto norm = global_grad_norm(params_).to(torch::kFloat64);
  const auto scale = scaler_ ? scaler_->scale().to(torch::kFloat64) : torch::zeros({}, norm.options());
  if (scaler_) norm = norm / scale;
  const auto loss = step_loss(sums[0], sums[2], sums[kRtdSums], counts);
  const auto found_inf = torch::logical_not(torch::isfinite(norm) & torch::isfinite(loss))
                             .to(torch::kFloat32);
  // Clipping happens inside the optimizer's kernel: the gradients divided as they are read.
  auto divisor = max_grad_norm_ > 0 ? clip_divisor(norm, max_grad_norm_) : torch::Tensor();
  if (scaler_) divisor = divisor.defined() ? divisor * scale : scale;
  optimizer_->step_scaled(divisor, found_inf);
  if (scaler_) scaler_->update(found_inf);
  auto outcome = torch::cat({sums, norm.view({1}), found_inf.to(torch::kFloat64).view({1}), scale.view({1})});
  if (distiller_) {
    if (comm_->world_size() > 1) comm_->all_reduce_sum(pending_distill_);
    outcome = torch::cat({outcome, pending_distill_});
  }
  if (times) {
    synchronize();
    times->update += seconds_since(start);
  }
  return outcome;
}

}  // namespace mlm::train

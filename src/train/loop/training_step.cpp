#include "mlm/train/loop/training_step.h"

#include <torch/cuda.h>

#include <cmath>

#include "mlm/train/loop/autocast.h"
#include "mlm/train/loop/batch_tensors.h"
#include "mlm/train/loop/grad_clip.h"
#include "mlm/train/loop/optimizer.h"
#include "mlm/dist/sum_across_ranks.h"
#include "mlm/util/elapsed.h"

namespace mlm::train {

namespace {

/// What a step's losses are divided by: its selected positions and sentence pairs on all
/// ranks (at least 1, so an empty step divides nothing by zero).
struct LossNormalisers {
  double masked, pairs;
  explicit LossNormalisers(const StepStats& stats)
      : masked(std::max<double>(static_cast<double>(stats.num_masked), 1.0)),
        pairs(std::max<double>(static_cast<double>(stats.pairs), 1.0)) {}
};

}  // namespace

StepBatches::StepBatches(std::vector<masking::MaskedBatch> batches)
    : micro_batches(std::move(batches)) {
  for (const auto& batch : micro_batches) {
    masked += static_cast<double>(batch.num_masked());
    pairs += static_cast<double>(batch.nsp_labels.size());
    tokens += static_cast<double>(count_tokens(batch));
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
                                bool bf16) {
  const auto inputs = to_bert_inputs(batch, device);
  AutocastScope autocast(bf16, device);
  return model->forward(inputs);
}

TrainingStep::TrainingStep(model::MaskedLm model, const config::RunConfig& config,
                           std::shared_ptr<dist::Communicator> comm, bool bf16)
    : model_(std::move(model)),
      optimizer_(make_adamw(*model_, config.optim)),
      params_(split_parameters(*model_).all()),
      comm_(std::move(comm)),
      device_(comm_->device()),
      bf16_(bf16),
      max_grad_norm_(config.optim.max_grad_norm) {
  if (comm_->world_size() > 1) {
    reducer_ = std::make_unique<dist::GradientReducer>(comm_, params_, config.distributed.bucket_mb);
  }
}

TrainingStep::~TrainingStep() = default;

void TrainingStep::synchronize() const {
  if (device_.is_cuda()) torch::cuda::synchronize();
}

StepStats TrainingStep::run(int64_t step, double lr, const StepBatches& batches,
                            StepTimes* times) {
  StepStats stats;
  stats.step = step;
  stats.lr = lr;
  // The loss normaliser: the whole step's selected positions (and sentence pairs), all ranks.
  const auto counts = dist::sum_across_ranks(*comm_, {batches.masked, batches.pairs, batches.tokens});
  stats.num_masked = static_cast<int64_t>(counts[0]);
  stats.pairs = static_cast<int64_t>(counts[1]);
  stats.tokens = static_cast<int64_t>(counts[2]);
  set_learning_rate(*optimizer_, lr);
  forward_backward(batches, stats, times);
  if (gradient_hook_) gradient_hook_(step, params_);
  apply_update(stats, times);
  return stats;
}

void TrainingStep::forward_backward(const StepBatches& batches, StepStats& stats,
                                    StepTimes* times) {
  const LossNormalisers by(stats);
  optimizer_->zero_grad();
  // The step's sums stay tensors on the device (no host read per micro-batch): MLM loss,
  // correct, NSP/SOP loss, NSP/SOP correct.
  auto sums = torch::zeros({4}, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
  for (const auto& batch : batches.micro_batches) {
    auto start = SteadyClock::now();
    const auto out = forward_batch(model_, batch, device_, bf16_);
    auto loss = out.mlm_loss_sum / by.masked;
    auto as_double = [](const torch::Tensor& t) { return t.detach().to(torch::kFloat64).view({1}); };
    std::vector<torch::Tensor> parts = {as_double(out.mlm_loss_sum), as_double(out.mlm_correct)};
    if (out.nsp_loss_sum.defined()) {
      loss = loss + out.nsp_loss_sum / by.pairs;
      parts.push_back(as_double(out.nsp_loss_sum));
      parts.push_back(as_double(out.nsp_correct));
    }
    sums.narrow(0, 0, static_cast<int64_t>(parts.size())).add_(torch::cat(parts));
    if (times) times->forward += seconds_since(start);

    start = SteadyClock::now();
    loss.backward();
    if (times) {
      synchronize();
      times->backward += seconds_since(start);
    }
  }
  pending_sums_ = sums;
}

void TrainingStep::apply_update(StepStats& stats, StepTimes* times) {
  const auto start = SteadyClock::now();
  if (reducer_) reducer_->reduce();
  // Every rank holds the same summed gradients now, so the norm (and the skip decision) agree.
  // One host read per step: the loss sums and the gradient norm together.
  const auto read = torch::cat({pending_sums_, global_grad_norm(params_).to(pending_sums_.options()).view({1})}).cpu();
  const auto* values = read.data_ptr<double>();
  const auto sums = dist::sum_across_ranks(*comm_, {values[0], values[1], values[2], values[3]});
  const LossNormalisers by(stats);
  stats.loss_sum = sums[0];
  stats.correct = sums[1];
  stats.nsp_loss_sum = sums[2];
  stats.nsp_correct = sums[3];
  stats.loss = sums[0] / by.masked + (stats.pairs > 0 ? sums[2] / by.pairs : 0.0);
  stats.mlm_accuracy = sums[1] / by.masked;
  stats.grad_norm = values[4];
  stats.skipped = !std::isfinite(stats.grad_norm) || !std::isfinite(stats.loss);
  if (stats.skipped) {
    optimizer_->zero_grad();
  } else {
    // Clipping happens inside the optimizer's kernel: the gradients divided as they are read.
    optimizer_->step_scaled(clip_divisor(stats.grad_norm, max_grad_norm_));
  }
  if (times) {
    synchronize();
    times->update += seconds_since(start);
  }
}

}  // namespace mlm::train

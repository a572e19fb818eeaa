#include "mlm/train/optim/training_optimizer.h"

namespace mlm::train {

TrainingOptimizer::TrainingOptimizer(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                                     torch::optim::AdamWOptions defaults)
    : torch::optim::Optimizer(param_groups, std::make_unique<torch::optim::AdamWOptions>(defaults)) {}

torch::Tensor TrainingOptimizer::step(LossClosure closure) {
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  step_scaled({});
  return loss;
}

torch::Tensor& TrainingOptimizer::step_count(const torch::Tensor& param,
                                             const torch::optim::AdamWParamState& state) {
  auto& count = step_counts_[param.unsafeGetTensorImpl()];
  if (!count.defined()) {
    count = torch::full({}, static_cast<double>(state.step()), param.options().dtype(torch::kFloat32));
  }
  return count;
}

TrainingOptimizer::GroupTensors TrainingOptimizer::group_tensors(torch::optim::OptimizerParamGroup& group) {
  GroupTensors tensors;
  for (auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    auto& slot = state_[p.unsafeGetTensorImpl()];
    if (!slot) {
      auto fresh = std::make_unique<torch::optim::AdamWParamState>();
      fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
    tensors.params.push_back(p);
    tensors.grads.push_back(p.grad());
    tensors.exp_avgs.push_back(state.exp_avg());
    tensors.exp_avg_sqs.push_back(state.exp_avg_sq());
    tensors.steps.push_back(step_count(p, state));
  }
  return tensors;
}

void TrainingOptimizer::publish_state() const {
  if (step_counts_.empty()) return;
  std::vector<void*> keys;
  std::vector<torch::Tensor> counts;
  for (const auto& [key, count] : step_counts_) {
    keys.push_back(key);
    counts.push_back(count.view({1}));
  }
  const auto read = torch::cat(counts).to(torch::kCPU, torch::kFloat64);
  const auto* values = read.data_ptr<double>();
  for (size_t i = 0; i < keys.size(); ++i) {
    // state_ owns the states; only their step field changes (a mirror of the device count).
    auto& state = static_cast<torch::optim::AdamWParamState&>(*state_.at(keys[i]));
    state.step(static_cast<int64_t>(values[i]));
  }
}

void TrainingOptimizer::take_state_from(TrainingOptimizer& from) {
  from.publish_state();
  state_ = std::move(from.state_);
  from.state_.clear();
  step_counts_.clear();
}

void TrainingOptimizer::save(torch::serialize::OutputArchive& archive) const {
  publish_state();
  // What torch::optim::AdamW::save writes.
  torch::optim::serialize<torch::optim::AdamWParamState, torch::optim::AdamWOptions>(archive, *this);
}

void TrainingOptimizer::load(torch::serialize::InputArchive& archive) {
  torch::optim::serialize<torch::optim::AdamWParamState, torch::optim::AdamWOptions>(archive, *this);
  step_counts_.clear();  // made again from the loaded states at the next step
}

}  // namespace mlm::train

#pragma once
// What the training step needs of an optimizer, whatever its update rule (AdamW, LAMB,
// StableAdamW): a step that reads the clip divisor and the skip flag on the device, so that
// nothing waits for the host; the state a checkpoint saves, in torch::optim's archive; and a
// way to hand that state to another optimizer object of the same type.
//
// Every type keeps torch::optim::AdamW's state (AdamWParamState: step, exp_avg, exp_avg_sq,
// the raw moments) and options (AdamWOptions: lr, betas, eps, weight_decay per group), so a
// checkpoint is the one torch::optim::AdamW writes, whichever type wrote it, and the moments
// mean the same thing to all three.
#include <torch/torch.h>

#include <unordered_map>
#include <vector>

namespace mlm::train {

class TrainingOptimizer : public torch::optim::Optimizer {
 public:
  TrainingOptimizer(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                    torch::optim::AdamWOptions defaults);

  /// step_scaled() without clipping or skipping, after the closure if one is given.
  torch::Tensor step(LossClosure closure = nullptr) override;

  /// A step on the gradients divided by `grad_divisor` (a 0-d tensor, clipping: grad_clip.h;
  /// undefined: 1); the gradients themselves are not rewritten. Where `found_inf` (a 0-d 0/1
  /// tensor on the parameters' device; undefined: 0) is 1, nothing moves: parameters,
  /// moments and step counts stay as they were. No host read.
  virtual void step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf = {}) = 0;

  /// Writes what lives on the device only (each parameter's step count) into state(), with
  /// one host read. save() calls it; call it before state() is read or moved elsewhere.
  virtual void publish_state() const;

  /// Moves `from`'s state into this optimizer (same type, same parameters): publishes it
  /// first and drops this one's device copies, so the next step continues `from`'s.
  void take_state_from(TrainingOptimizer& from);

  /// torch::optim::AdamW's archive: publish_state(), then its state and param groups.
  void save(torch::serialize::OutputArchive& archive) const override;
  /// The same archive back; the device step counts are rebuilt from it at the next step.
  void load(torch::serialize::InputArchive& archive) override;

 protected:
  /// The parameters of one group that have a gradient, in group order, with their state
  /// (zero moments made on first use) and device step counts.
  struct GroupTensors {
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    bool empty() const { return params.empty(); }
  };
  GroupTensors group_tensors(torch::optim::OptimizerParamGroup& group);

  static const torch::optim::AdamWOptions& adamw_options(const torch::optim::OptimizerParamGroup& group) {
    return static_cast<const torch::optim::AdamWOptions&>(group.options());
  }

 private:
  /// Each parameter's step count: a float32 on its device (as PyTorch's fused AdamW keeps
  /// them), keyed by TensorImpl as state_ is, made from AdamWParamState::step() when missing.
  torch::Tensor& step_count(const torch::Tensor& param, const torch::optim::AdamWParamState& state);

  std::unordered_map<void*, torch::Tensor> step_counts_;
};

}  // namespace mlm::train

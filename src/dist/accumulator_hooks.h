#pragma once
// Private to src/dist: a callback after each parameter's gradient accumulator runs, i.e. once
// the backward pass has added that parameter's gradient into .grad (GradientReducer uses it
// to start buckets during backward, as PyTorch DDP's Reducer does).
#include <torch/csrc/autograd/node.h>
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace mlm::dist {

class AccumulatorHooks {
 public:
  /// Hooks the accumulator of each of `params` (leaves requiring grad, no two alike);
  /// `on_accumulated(i)` runs on the autograd engine's thread after params[i]'s accumulator.
  AccumulatorHooks(const std::vector<torch::Tensor>& params,
                   std::function<void(size_t)> on_accumulated);
  ~AccumulatorHooks();  // removes the hooks (the accumulators may outlive this)
  AccumulatorHooks(const AccumulatorHooks&) = delete;
  AccumulatorHooks& operator=(const AccumulatorHooks&) = delete;

  /// Per parameter: whether a backward pass from `root` will run its accumulator (its
  /// accumulator is in root's autograd graph). One that will not keeps its gradient.
  /// Throws std::logic_error when a parameter's accumulator is no longer the hooked one.
  std::vector<bool> reached_from(const torch::Tensor& root) const;

 private:
  std::vector<torch::Tensor> params_;
  // Held: a parameter keeps its accumulator only weakly, and a new one would lack the hook.
  std::vector<c10::intrusive_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hook_keys_;
};

}  // namespace mlm::dist

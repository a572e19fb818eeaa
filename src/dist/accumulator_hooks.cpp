// Gradient-accumulator post hooks (see accumulator_hooks.h).
#include "accumulator_hooks.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace mlm::dist {
namespace {

class CallAfterAccumulation final : public torch::autograd::FunctionPostHook {
 public:
  CallAfterAccumulation(std::function<void(size_t)> fn, size_t index)
      : fn_(std::move(fn)), index_(index) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list&) override {
    fn_(index_);
    return outputs;
  }

 private:
  std::function<void(size_t)> fn_;
  size_t index_;
};

}  // namespace

AccumulatorHooks::AccumulatorHooks(const std::vector<torch::Tensor>& params,
                                   std::function<void(size_t)> on_accumulated)
    : params_(params) {
  for (size_t i = 0; i < params_.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
    if (!accumulator) {
      throw std::invalid_argument(
          fmt::format("parameter {} has no gradient accumulator (not a leaf requiring grad)", i));
    }
    hook_keys_.push_back(
        accumulator->add_post_hook(std::make_unique<CallAfterAccumulation>(on_accumulated, i)));
    accumulators_.push_back(std::move(accumulator));
  }
}

AccumulatorHooks::~AccumulatorHooks() {
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hook_keys_[i]);
}

std::vector<bool> AccumulatorHooks::reached_from(const torch::Tensor& root) const {
  std::unordered_map<const torch::autograd::Node*, size_t> index_of;
  for (size_t i = 0; i < accumulators_.size(); ++i) {
    // set_data() with another dtype or device replaces a parameter's accumulator: ours would
    // never run, and its parameter would pass for unused. Loud beats silently wrong sums.
    if (torch::autograd::impl::try_get_grad_accumulator(params_[i]).get() != accumulators_[i].get()) {
      throw std::logic_error(fmt::format(
          "parameter {}'s gradient accumulator changed after its reduction hook was installed", i));
    }
    index_of.emplace(accumulators_[i].get(), i);
  }
  std::vector<bool> reached(accumulators_.size(), false);
  std::unordered_set<const torch::autograd::Node*> seen;
  std::vector<const torch::autograd::Node*> stack;
  if (root.defined() && root.grad_fn()) stack.push_back(root.grad_fn().get());
  while (!stack.empty()) {
    const auto* node = stack.back();
    stack.pop_back();
    if (!seen.insert(node).second) continue;
    if (auto it = index_of.find(node); it != index_of.end()) reached[it->second] = true;
    for (const auto& edge : node->next_edges()) {
      if (edge.function) stack.push_back(edge.function.get());
    }
  }
  return reached;
}

}  // namespace mlm::dist

#include "mlm/model/checkpointed_layer.h"

#include <ATen/autocast_mode.h>
#include <torch/custom_class.h>

#include <optional>

namespace mlm::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What the recomputation needs, kept in the autograd context until the backward pass.
struct Recomputation : torch::CustomClassHolder {
  std::function<torch::Tensor(const torch::Tensor&)> layer;
  c10::Device device = torch::kCPU;
  at::Tensor cpu_rng, device_rng;  // the default generators' states before the first pass
  bool autocast = false;
  at::ScalarType autocast_dtype = at::kBFloat16;
};

at::Generator default_generator(const c10::Device& device) {
  return at::globalContext().defaultGenerator(device);
}

// Sets the default generators to `cpu` / `on_device` for its lifetime, then puts back theirs.
class GeneratorStates {
 public:
  GeneratorStates(const Recomputation& r) : device_(r.device) {
    cpu_ = default_generator(torch::kCPU).get_state();
    default_generator(torch::kCPU).set_state(r.cpu_rng);
    if (r.device_rng.defined()) {
      device_state_ = default_generator(device_).get_state();
      default_generator(device_).set_state(r.device_rng);
    }
  }
  ~GeneratorStates() {
    default_generator(torch::kCPU).set_state(cpu_);
    if (device_state_.defined()) default_generator(device_).set_state(device_state_);
  }

 private:
  c10::Device device_;
  at::Tensor cpu_, device_state_;
};

// Autocast as the first pass had it, for the recomputation (the backward pass runs outside
// the training step's autocast scope).
class AutocastAsBefore {
 public:
  AutocastAsBefore(const Recomputation& r) : type_(r.device.type()), active_(r.autocast) {
    if (!active_) return;
    previous_ = at::autocast::is_autocast_enabled(type_);
    previous_dtype_ = at::autocast::get_autocast_dtype(type_);
    at::autocast::set_autocast_enabled(type_, true);
    at::autocast::set_autocast_dtype(type_, r.autocast_dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastAsBefore() {
    if (!active_) return;
    at::autocast::set_autocast_enabled(type_, previous_);
    at::autocast::set_autocast_dtype(type_, previous_dtype_);
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  }

 private:
  c10::DeviceType type_;
  bool active_, previous_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  // Autograd is off inside a custom function's forward: nothing of the layer is recorded.
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               c10::intrusive_ptr<Recomputation> recomputation) {
    ctx->save_for_backward({x});
    auto out = recomputation->layer(x);
    ctx->saved_data["recomputation"] = c10::IValue::make_capsule(std::move(recomputation));
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables().front();
    auto recomputation = c10::static_intrusive_pointer_cast<Recomputation>(
        ctx->saved_data["recomputation"].toCapsule());
    auto x = saved.detach().requires_grad_(true);
    torch::Tensor out;
    {
      GeneratorStates generators(*recomputation);
      AutocastAsBefore autocast(*recomputation);
      torch::AutoGradMode enable_grad(true);
      out = recomputation->layer(x);
    }
    torch::autograd::backward({out}, {grads.front()});
    return {x.grad(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpointed_layer(std::function<torch::Tensor(const torch::Tensor&)> layer,
                                 const torch::Tensor& x) {
  if (!torch::GradMode::is_enabled() || !x.requires_grad()) return layer(x);  // nothing to keep
  auto recomputation = c10::make_intrusive<Recomputation>();
  recomputation->layer = std::move(layer);
  recomputation->device = x.device();
  recomputation->cpu_rng = default_generator(torch::kCPU).get_state();
  if (!x.device().is_cpu()) recomputation->device_rng = default_generator(x.device()).get_state();
  recomputation->autocast = at::autocast::is_autocast_enabled(x.device().type());
  recomputation->autocast_dtype = at::autocast::get_autocast_dtype(x.device().type());
  return CheckpointFunction::apply(x, std::move(recomputation));
}

}  // namespace mlm::model

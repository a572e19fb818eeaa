#include "adam_moments.h"

namespace mlm::train {

AdamMoments advance_moments(const std::vector<torch::Tensor>& grads,
                            const std::vector<torch::Tensor>& exp_avgs,
                            const std::vector<torch::Tensor>& exp_avg_sqs,
                            const std::vector<torch::Tensor>& steps, double beta1, double beta2,
                            bool bias_correction, const torch::Tensor& grad_divisor,
                            const torch::Tensor& found_inf) {
  AdamMoments out;
  // Scalars reach the foreach ops in the parameters' dtype, as their fast paths expect;
  // they are computed in float64 first.
  const auto like = grads.front().options();
  const auto f64 = like.dtype(torch::kFloat64);
  const auto keep = found_inf.defined() ? 1 - found_inf.to(f64) : torch::ones({}, f64);
  out.keep = keep.to(like);
  torch::_foreach_add_(steps, keep.to(torch::kFloat32));

  out.grads = grad_divisor.defined() ? torch::_foreach_div(grads, grad_divisor.to(like))
                                     : std::vector<torch::Tensor>(grads.begin(), grads.end());
  if (found_inf.defined()) {
    const auto skip = found_inf.to(like.dtype(torch::kBool));
    for (auto& g : out.grads) g = torch::where(skip, 0.0, g);
  }
  // beta m + (1 - beta) g with beta -> 1 on a skipped step (where g is 0): m * 1 + 0 = m.
  torch::_foreach_mul_(exp_avgs, (1 - (1 - beta1) * keep).to(like));
  torch::_foreach_add_(exp_avgs, out.grads, 1 - beta1);
  torch::_foreach_mul_(exp_avg_sqs, (1 - (1 - beta2) * keep).to(like));
  torch::_foreach_addcmul_(exp_avg_sqs, out.grads, out.grads, 1 - beta2);

  if (!bias_correction) {
    const auto one = torch::ones({}, like);
    out.bias_correction1.assign(grads.size(), one);
    out.bias_correction2.assign(grads.size(), one);
    return out;
  }
  // In float64 from the float32 counts: 1 - beta2^t is small early, and float32's beta2
  // would be off in its fifth digit.
  const auto t = torch::stack(steps).to(torch::kFloat64).clamp_min(1);
  out.bias_correction1 = (1 - torch::pow(beta1, t)).to(like).unbind(0);
  out.bias_correction2 = (1 - torch::pow(beta2, t)).to(like).unbind(0);
  return out;
}

}  // namespace mlm::train

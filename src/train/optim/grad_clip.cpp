#include "mlm/train/optim/grad_clip.h"

#include <cmath>

namespace mlm::train {

torch::Tensor global_grad_norm(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> norms;
  norms.reserve(params.size());
  for (const auto& p : params) {
    if (p.grad().defined()) norms.push_back(p.grad().detach().norm(2).to(torch::kFloat));
  }
  if (norms.empty()) return torch::zeros({}, torch::kFloat);
  // Same reduction as PyTorch: the norm of the per-tensor norms.
  return torch::stack(norms).norm(2);
}

double clip_divisor(double norm, double max_norm) {
  if (max_norm <= 0 || !std::isfinite(norm)) return 1.0;
  const double coef = max_norm / (norm + 1e-6);
  return coef < 1.0 ? 1.0 / coef : 1.0;
}

torch::Tensor clip_divisor(const torch::Tensor& norm, double max_norm) {
  const auto n = norm.to(torch::kFloat64);
  const auto one = torch::ones_like(n);
  if (max_norm <= 0) return one;
  // Tensor divisions throughout: ATen's scalar / tensor multiplies by a reciprocal instead,
  // which would round differently from the host formula.
  const auto coef = torch::full_like(n, max_norm) / (n + 1e-6);
  return torch::where(torch::isfinite(n) & (coef < 1.0), one / coef, one);
}

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  const double total_norm = global_grad_norm(params).item<double>();
  const double divisor = clip_divisor(total_norm, max_norm);
  if (divisor != 1.0) {
    for (const auto& p : params) {
      if (p.grad().defined()) p.grad().detach().mul_(1.0 / divisor);
    }
  }
  return total_norm;
}

}  // namespace mlm::train

#include "mlm/train/loop/grad_clip.h"

#include <cmath>

namespace mlm::train {

double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm) {
  std::vector<torch::Tensor> norms;
  norms.reserve(params.size());
  for (const auto& p : params) {
    if (p.grad().defined()) norms.push_back(p.grad().detach().norm(2).to(torch::kFloat));
  }
  if (norms.empty()) return 0.0;
  // Same reduction as PyTorch: the norm of the per-tensor norms.
  const auto total = torch::stack(norms).norm(2);
  const double total_norm = total.item<double>();
  if (max_norm > 0 && std::isfinite(total_norm)) {
    const double coef = max_norm / (total_norm + 1e-6);
    if (coef < 1.0) {
      for (const auto& p : params) {
        if (p.grad().defined()) p.grad().detach().mul_(coef);
      }
    }
  }
  return total_norm;
}

}  // namespace mlm::train

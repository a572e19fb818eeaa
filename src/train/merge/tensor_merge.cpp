#include "mlm/train/merge/tensor_merge.h"

#include <algorithm>
#include <cstdint>

namespace mlm::train::merge {
namespace {

namespace F = torch::indexing;

torch::ScalarType compute_dtype(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32;
}

// Weights as the reference holds them: a tensor of the compute dtype (float32 rounds them).
torch::Tensor weight_tensor(const std::vector<double>& weights, torch::ScalarType dtype) {
  return torch::tensor(weights, torch::kFloat64).to(dtype);
}

// The reference's bound on full-precision scratch in slerp: its norms and dots are summed
// chunk by chunk, which this follows so that the roundings agree.
constexpr int64_t kSlerpChunkElements = 1024 * 1024;

}  // namespace

torch::Tensor linear_merge(const std::vector<torch::Tensor>& tensors, const std::vector<double>& weights,
                           bool normalize) {
  const auto& first = tensors.front();
  const auto dtype = compute_dtype(first);
  const auto w = weight_tensor(weights, dtype);
  auto result = torch::zeros_like(first, torch::TensorOptions().dtype(dtype));
  for (size_t i = 0; i < tensors.size(); ++i) result.addcmul_(tensors[i], w[static_cast<int64_t>(i)]);
  if (normalize) result.div_(w.sum());
  return result.to(first.scalar_type());
}

torch::Tensor trim_by_magnitude(const torch::Tensor& delta, double density, bool rescale_l1) {
  if (density >= 1) return delta;
  if (delta.numel() == 0) return torch::zeros_like(delta);
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(density * static_cast<double>(delta.numel())));
  auto mask = torch::zeros({delta.numel()}, delta.options());
  const auto magnitude = delta.abs().reshape(-1).to(torch::kFloat32);
  const auto keep = torch::argsort(magnitude, /*dim=*/-1, /*descending=*/true).index({F::Slice(0, k)});
  mask.index_put_({keep}, 1);
  auto masked = delta * mask.reshape_as(delta);
  if (!rescale_l1) return masked;
  const auto before = delta.abs().sum(), after = masked.abs().sum();
  constexpr double eps = 1e-7;
  if (before.item<double>() < eps || after.item<double>() < eps) return masked;
  return masked * (before / after);
}

torch::Tensor task_arithmetic_merge(const torch::Tensor& base, const std::vector<torch::Tensor>& tensors,
                                    const std::vector<double>& weights, const std::vector<double>& densities,
                                    const TaskArithmeticOptions& options) {
  std::vector<int64_t> stacked_shape = {static_cast<int64_t>(tensors.size())};
  for (const auto s : base.sizes()) stacked_shape.push_back(s);
  auto deltas = base.new_empty(stacked_shape);
  for (size_t i = 0; i < tensors.size(); ++i) {
    auto delta = tensors[i] - base;
    if (options.ties) delta = trim_by_magnitude(delta, densities[i], options.rescale);
    deltas[static_cast<int64_t>(i)] = delta;
  }
  auto w = weight_tensor(weights, deltas.scalar_type());
  while (w.dim() < deltas.dim()) w.unsqueeze_(-1);
  deltas.mul_(w);

  torch::Tensor mixed, divisor;
  if (options.ties) {
    // The elected sign: that of the summed weighted deltas (>= 0 counts as +); a model's entry
    // joins the mean only where its sign agrees (a zero, trimmed, entry never does).
    const auto majority = (deltas.sum(0) >= 0).to(base.scalar_type()) * 2 - 1;
    const auto agrees = deltas.sign().to(base.scalar_type()) == majority;
    mixed = (deltas * agrees).sum(0);
    divisor = (w * agrees).sum(0);
    divisor.masked_fill_(divisor == 0, 1);
  } else {
    mixed = deltas.sum(0);
    divisor = w.sum(0);
    divisor.masked_fill_(divisor.abs() < 1e-8, 1);
  }
  if (options.normalize) mixed.div_(divisor);
  if (options.lambda != 1) mixed.mul_(options.lambda);
  return (base + mixed).to(base.scalar_type());
}

torch::Tensor slerp_merge(double t_value, const torch::Tensor& base, const torch::Tensor& other) {
  const auto dtype = compute_dtype(base);
  // The whole tensor is one vector (the reference's leading axis batches tensors, not rows).
  const int64_t rows = 1;
  const auto a = base.reshape({rows, -1}), b = other.reshape({rows, -1});
  const auto t = torch::full({1, 1}, t_value, torch::TensorOptions().dtype(dtype));
  if (a.size(1) == 0) return ((1 - t) * a + t * b).reshape(base.sizes()).to(base.scalar_type());

  const int64_t chunk = std::max<int64_t>(1, kSlerpChunkElements / rows);
  const int64_t columns = a.size(1);
  auto part = [&](const torch::Tensor& x, int64_t start) {
    return x.index({F::Slice(), F::Slice(start, std::min(start + chunk, columns))}).to(dtype);
  };
  std::vector<torch::Tensor> norm_a_parts, norm_b_parts;
  for (int64_t s = 0; s < columns; s += chunk) {
    norm_a_parts.push_back(torch::linalg_vector_norm(part(a, s), 2, {1}, /*keepdim=*/true));
    norm_b_parts.push_back(torch::linalg_vector_norm(part(b, s), 2, {1}, /*keepdim=*/true));
  }
  constexpr double eps = 1e-8;
  auto norm_a = torch::linalg_vector_norm(torch::stack(norm_a_parts), 2, {0});
  auto norm_b = torch::linalg_vector_norm(torch::stack(norm_b_parts), 2, {0});
  norm_a = torch::where(norm_a > eps, norm_a, torch::ones_like(norm_a));
  norm_b = torch::where(norm_b > eps, norm_b, torch::ones_like(norm_b));
  std::vector<torch::Tensor> dot_parts;
  for (int64_t s = 0; s < columns; s += chunk)
    dot_parts.push_back(((part(a, s) / norm_a) * (part(b, s) / norm_b)).sum(1, /*keepdim=*/true));
  const auto dot = torch::stack(dot_parts).sum(0).clamp(-1, 1);
  constexpr double kDotThreshold = 0.9995;
  const auto linear = dot.abs() > kDotThreshold;
  const auto theta = torch::acos(torch::where(linear, torch::zeros_like(dot), dot));
  const auto sin_theta = torch::sin(theta);
  const auto coef_a = torch::where(linear, 1 - t, torch::sin((1 - t) * theta) / sin_theta);
  const auto coef_b = torch::where(linear, t, torch::sin(t * theta) / sin_theta);

  auto result = torch::empty_like(a);
  for (int64_t s = 0; s < columns; s += chunk)
    result.index_put_({F::Slice(), F::Slice(s, std::min(s + chunk, columns))}, coef_a * part(a, s) + coef_b * part(b, s));
  return result.reshape(base.sizes());
}

}  // namespace mlm::train::merge

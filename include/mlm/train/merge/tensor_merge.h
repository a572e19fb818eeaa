#pragma once
// The merge methods on one tensor, as mergekit 0.1.5 computes them
// (merge_methods/linear.py, generalized_task_arithmetic.py, slerp.py, sparsify.py), so that
// mlm-merge and mergekit give the same tensors: float32 arithmetic in the same order.
#include <torch/torch.h>

#include <vector>

namespace mlm::train::merge {

/// average (mergekit's linear): sum_i w_i x_i, divided by sum_i w_i when `normalize`.
torch::Tensor linear_merge(const std::vector<torch::Tensor>& tensors, const std::vector<double>& weights,
                           bool normalize);

struct TaskArithmeticOptions {
  bool ties = false;       // trim each delta to its density, elect the sign, disjoint mean
  bool normalize = false;  // divide by the weights' sum (ties: of the models agreeing with the sign)
  double lambda = 1.0;     // scales the merged delta
  bool rescale = false;    // ties: a trimmed delta rescaled to its L1 norm before trimming
};

/// task_arithmetic and ties: base + lambda * merge(w_i * trim(x_i - base, density_i)).
torch::Tensor task_arithmetic_merge(const torch::Tensor& base, const std::vector<torch::Tensor>& tensors,
                                    const std::vector<double>& weights, const std::vector<double>& densities,
                                    const TaskArithmeticOptions& options);

/// ties' trim: the `density` share of `delta`'s entries largest in magnitude (at least one)
/// kept, the rest zero; with `rescale_l1`, scaled back to the L1 norm it had.
torch::Tensor trim_by_magnitude(const torch::Tensor& delta, double density, bool rescale_l1);

/// slerp of the tensor as one flattened vector: sin((1-t)θ)/sin θ · base + sin(tθ)/sin θ · other
/// with cos θ the cosine of the two; nearly parallel or antiparallel tensors (|cos θ| > 0.9995)
/// interpolate linearly; a norm <= 1e-8 counts as 1 in the cosine.
torch::Tensor slerp_merge(double t, const torch::Tensor& base, const torch::Tensor& other);

}  // namespace mlm::train::merge

#pragma once
// Activation checkpointing (model.activation_checkpointing), the reentrant kind of
// torch.utils.checkpoint: a layer runs without autograd on the way forward, so only its input
// is kept, and again with autograd during the backward pass, which then differentiates the
// recomputed graph. Memory falls from every layer's intermediate activations to one layer's;
// time grows by about one more forward pass.
#include <torch/torch.h>

#include <functional>

namespace mlm::model {

/// `layer(x)`, checkpointed. The recomputation sees what the first pass saw: the default
/// generators' state (so dropout draws the same masks) and autocast's. Gradients reach `x` and
/// every parameter `layer` uses; `x` must require grad (a layer's input in training does).
torch::Tensor checkpointed_layer(std::function<torch::Tensor(const torch::Tensor&)> layer,
                                 const torch::Tensor& x);

}  // namespace mlm::model

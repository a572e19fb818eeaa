#pragma once
// A state dict in the Hugging Face layout: tensors by transformers' key names, in order.
#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mlm::model {

using TensorDict = std::vector<std::pair<std::string, torch::Tensor>>;

/// What a weight view shows of a parameter: the weight itself (detached) or its gradient.
using PickTensor = std::function<torch::Tensor(const torch::Tensor&)>;

}  // namespace mlm::model

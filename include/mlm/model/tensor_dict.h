#pragma once
// A state dict in the Hugging Face layout: tensors by transformers' key names, in order.
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace mlm::model {

using TensorDict = std::vector<std::pair<std::string, torch::Tensor>>;

}  // namespace mlm::model

#pragma once
// Small building blocks shared by the BERT modules: a LayerNorm that is safe under CPU bf16
// autocast, the activation, and the additive attention bias for padded keys.
#include <torch/torch.h>

#include "mlm/config/enums.h"

namespace mlm::model {

/// LayerNorm over the last dimension with fp32 weight and bias. The input is cast to fp32
/// first, so the normalisation runs in fp32 under bf16 autocast on every device (as CUDA's
/// autocast policy does for layer_norm). The output is fp32 (the next linear casts it again).
struct LayerNormImpl : torch::nn::Module {
  LayerNormImpl(int64_t size, double eps);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight, bias;
  int64_t size_;
  double eps_;
};
TORCH_MODULE(LayerNorm);

/// gelu: exact erf form (Hugging Face "gelu"); gelu_tanh: the tanh approximation
/// (Hugging Face "gelu_new" / "gelu_pytorch_tanh").
torch::Tensor activation(const torch::Tensor& x, config::Activation act);

/// [B,1,1,S] fp32 additive bias: 0 for real keys, -1e30 for padding (attention_mask == 0).
/// Finite on purpose: a fully padded row then gives uniform weights instead of NaN, and -1e30
/// is representable in bf16; exp(-1e30 - max) is exactly 0, so real tokens are unaffected.
torch::Tensor attention_bias_from_mask(const torch::Tensor& attention_mask);

/// An empty module, only to give parameters their Hugging Face dotted path
/// ("attention" -> "output" -> "dense"). Returns the registered child.
std::shared_ptr<torch::nn::Module> add_container(torch::nn::Module& parent, const std::string& name);

}  // namespace mlm::model

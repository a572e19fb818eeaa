#include "mlm/model/layers.h"

namespace mlm::model {

LayerNormImpl::LayerNormImpl(int64_t size, double eps) : size_(size), eps_(eps) {
  weight = register_parameter("weight", torch::ones({size}));
  bias = register_parameter("bias", torch::zeros({size}));
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  return torch::layer_norm(x.to(torch::kFloat32), {size_}, weight, bias, eps_);
}

torch::Tensor activation(const torch::Tensor& x, config::Activation act) {
  switch (act) {
    case config::Activation::gelu: return torch::gelu(x);
    case config::Activation::gelu_tanh: return torch::gelu(x, "tanh");
  }
  TORCH_CHECK(false, "unknown activation");
}

torch::Tensor attention_bias_from_mask(const torch::Tensor& attention_mask) {
  TORCH_CHECK(attention_mask.dim() == 2, "attention_mask must be [B,S], got ", attention_mask.sizes());
  auto bias = torch::zeros(attention_mask.sizes(), attention_mask.options().dtype(torch::kFloat32));
  bias.masked_fill_(attention_mask.eq(0), -1e30);
  return bias.view({attention_mask.size(0), 1, 1, attention_mask.size(1)});
}

std::shared_ptr<torch::nn::Module> add_container(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

}  // namespace mlm::model

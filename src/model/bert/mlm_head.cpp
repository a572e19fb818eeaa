#include "mlm/model/bert/mlm_head.h"

namespace mlm::model {

MlmHeadImpl::MlmHeadImpl(const config::ModelConfig& c, int64_t padded_vocab) : act_(c.hidden_act) {
  auto transform = add_container(*this, "transform");
  transform_dense =
      transform->register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  transform_norm = transform->register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
  bias = register_parameter("bias", torch::zeros({padded_vocab}));
}

torch::Tensor MlmHeadImpl::forward(const torch::Tensor& hidden, const torch::Tensor& decoder_weight) {
  auto h = transform_norm(activation(linear(transform_dense, hidden), act_));
  return at::linear(h, decoder_weight, bias);
}

}  // namespace mlm::model

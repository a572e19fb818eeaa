#include "mlm/model/bert/mlm_head.h"

namespace mlm::model {

MlmHeadImpl::MlmHeadImpl(int64_t hidden, int64_t embedding_width, config::Activation act, double eps,
                         int64_t padded_vocab)
    : act_(act) {
  auto transform = add_container(*this, "transform");
  transform_dense = transform->register_module("dense", torch::nn::Linear(hidden, embedding_width));
  transform_norm = transform->register_module("LayerNorm", LayerNorm(embedding_width, eps));
  bias = register_parameter("bias", torch::zeros({padded_vocab}));
}

torch::Tensor MlmHeadImpl::forward(const torch::Tensor& hidden, const torch::Tensor& decoder_weight) {
  auto h = transform_norm(activation(linear(transform_dense, hidden), act_));
  return at::linear(h, decoder_weight, bias);
}

}  // namespace mlm::model

#pragma once
// The classification heads transformers puts on the BERT family's encoders:
//   BertFor{Sequence,Token}Classification: sequence: pooler (dense + tanh on [CLS]; the
//     encoder's own when it has one), dropout, classifier; token: dropout, classifier.
//   RobertaClassificationHead / ElectraClassificationHead (DenseClassificationHead): sequence:
//     [CLS], dropout, dense, activation (RoBERTa tanh, ELECTRA GELU), dropout, out_proj;
//     token: dropout, classifier.
// New weights ~ normal(0, initializer_range), zero biases, as transformers initialises them.
#include <torch/torch.h>

#include <functional>

#include "mlm/model/architecture_spec.h"
#include "mlm/model/bert/bert.h"

namespace mlm::model {

class BertClassificationHeadImpl : public ClassificationHeadImpl {
 public:
  BertClassificationHeadImpl(BertForPreTraining encoder, bool per_sequence, int64_t num_labels);
  torch::Tensor forward(const torch::Tensor& hidden) override;
  TensorDict hf_state_dict() override;
  bool load_hf_state_dict(const TensorDict& state) override;

 private:
  BertForPreTraining encoder_;  // its pooler, when it has one
  bool per_sequence_;
  double dropout_p_;
  torch::nn::Linear pooler{nullptr};      // sequence tasks of an encoder without a pooler
  torch::nn::Linear classifier{nullptr};
};

class DenseClassificationHeadImpl : public ClassificationHeadImpl {
 public:
  using Activation = std::function<torch::Tensor(const torch::Tensor&)>;
  DenseClassificationHeadImpl(const config::ModelConfig& encoder, bool per_sequence, int64_t num_labels,
                              Activation activation);
  torch::Tensor forward(const torch::Tensor& hidden) override;
  TensorDict hf_state_dict() override;
  bool load_hf_state_dict(const TensorDict& state) override;

 private:
  std::string classifier_prefix() const { return dense ? "classifier.out_proj." : "classifier."; }

  bool per_sequence_;
  double dropout_p_;
  Activation activation_;
  torch::nn::Linear dense{nullptr};       // sequence tasks: classifier.dense
  torch::nn::Linear classifier{nullptr};  // classifier (with dense: classifier.out_proj)
};

/// `key`'s tensor in `state`; undefined when absent.
torch::Tensor find_hf_tensor(const TensorDict& state, const std::string& key);

/// Copies `prefix`weight / bias from `state` into `layer` when both are there with its shape.
bool load_linear(const torch::nn::Linear& layer, const TensorDict& state, const std::string& prefix);

/// Appends `layer`'s weight and bias under `prefix` (detached).
void add_linear(TensorDict& out, const torch::nn::Linear& layer, const std::string& prefix);

/// normal(0, std) weight, zero bias.
void normal_init(const torch::nn::Linear& layer, double std);

}  // namespace mlm::model

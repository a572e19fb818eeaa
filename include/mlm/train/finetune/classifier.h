#pragma once
// A pretrained encoder with the classification head transformers puts on it for a task:
//   BERT       sequence: pooler (dense + tanh on [CLS]; the encoder's own when it has one),
//              dropout, classifier; token: dropout, classifier (BertFor{Sequence,Token}Classification)
//   ModernBERT sequence: [CLS], the MLM head's dense + activation + norm, dropout, classifier;
//              token: the same on every token (ModernBertFor{Sequence,Token}Classification)
//   ELECTRA    sequence: [CLS], dropout, dense, GELU, dropout, out_proj; token: dropout,
//              classifier (ElectraFor{Sequence,Token}Classification; the pair's discriminator)
//   RoBERTa    sequence: [CLS], dropout, dense, tanh, dropout, out_proj; token: dropout,
//              classifier (RobertaFor... / XLMRobertaFor{Sequence,Token}Classification)
// The new weights are drawn as transformers initialises them. hf_state_dict() is the matching
// ...ForSequenceClassification / ...ForTokenClassification checkpoint.
#include <torch/torch.h>

#include <string>

#include "mlm/config/task_config.h"
#include "mlm/model/masked_lm.h"

namespace mlm::train::finetune {

class ClassifierImpl : public torch::nn::Module {
 public:
  /// `encoder`: the pretrained model (its MLM head is not used, except ModernBERT's dense and
  /// norm, which its classifier reuses as transformers does); dropout as its config says.
  ClassifierImpl(model::MaskedLm encoder, config::TaskKind kind, int64_t num_labels);

  /// Logits [B, labels] (sequence tasks) or [B, S, labels] (token tasks), fp32.
  torch::Tensor forward(const model::MlmInputs& inputs);

  /// The encoder's keys (as the architecture's classification model names them) and the head's.
  model::TensorDict hf_state_dict();
  /// "BertForSequenceClassification", ... : what config.json's architectures names.
  std::string hf_class() const;
  /// Copies the head's weights from a classification checkpoint `state` (a previous export);
  /// false when it holds none.
  bool load_head(const model::TensorDict& state);

  model::MaskedLm encoder{nullptr};
  config::TaskKind kind;

 private:
  torch::Tensor dropout(const torch::Tensor& x) const;

  config::Architecture architecture_;
  double dropout_p_;
  torch::nn::Linear pooler{nullptr};      // BERT sequence tasks without an encoder pooler
  torch::nn::Linear dense{nullptr};       // ELECTRA, RoBERTa sequence tasks: classifier.dense
  torch::nn::Linear classifier{nullptr};  // classifier (with dense: classifier.out_proj)
};
TORCH_MODULE(Classifier);

}  // namespace mlm::train::finetune

#pragma once
// A pretrained encoder with the classification head transformers puts on it for a task (its
// architecture's: ArchitectureSpec::classification_head, e.g. BERT's pooler, RoBERTa's dense +
// tanh + out_proj, ModernBERT's reuse of its MLM head's dense and norm). hf_state_dict() is the
// matching ...ForSequenceClassification / ...ForTokenClassification checkpoint. A regression
// task is transformers' problem_type "regression": the sequence head with one output.
#include <torch/torch.h>

#include <string>

#include "mlm/config/task_config.h"
#include "mlm/model/architecture_spec.h"
#include "mlm/model/masked_lm.h"

namespace mlm::train::finetune {

/// The head's outputs for `task`: one per label, one (the value) for regression.
inline int64_t num_outputs(const config::TaskSection& task) {
  return task.kind == config::TaskKind::regression ? 1 : static_cast<int64_t>(task.labels.size());
}

class ClassifierImpl : public torch::nn::Module {
 public:
  /// `encoder`: the pretrained model (its MLM head is not used, except where the architecture's
  /// classification head reuses part of it); dropout as its config says.
  ClassifierImpl(model::MaskedLm encoder, config::TaskKind kind, int64_t num_labels);

  /// Logits [B, labels] (sequence tasks; [B, 1] for regression) or [B, S, labels] (token tasks).
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
  const model::ArchitectureSpec* spec_;
  model::ClassificationHead head{nullptr};
};
TORCH_MODULE(Classifier);

}  // namespace mlm::train::finetune

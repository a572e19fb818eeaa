#include "mlm/train/finetune/classifier.h"

#include "mlm/model/architectures.h"

namespace mlm::train::finetune {

ClassifierImpl::ClassifierImpl(model::MaskedLm encoder_in, config::TaskKind kind_in, int64_t num_labels)
    : encoder(std::move(encoder_in)), kind(kind_in), spec_(&model::architecture_spec(encoder->config().architecture)) {
  register_module("encoder", encoder.ptr());
  head = register_module("head", spec_->classification_head(encoder, kind != config::TaskKind::token_classification,
                                                            num_labels));
}

torch::Tensor ClassifierImpl::forward(const model::MlmInputs& in) {
  // One token type (RoBERTa's): a pair's second segment is type 0 too, as RoBERTa's tokenizer,
  // which gives no token types, leaves it.
  auto inputs = in;
  if (encoder->config().type_vocab_size == 1) inputs.token_type_ids = torch::Tensor();
  return head->forward(encoder->last_hidden_states(inputs));
}

std::string ClassifierImpl::hf_class() const {
  return spec_->hf_class_stem() +
         (kind != config::TaskKind::token_classification ? "ForSequenceClassification" : "ForTokenClassification");
}

model::TensorDict ClassifierImpl::hf_state_dict() {
  auto out = spec_->encoder_hf_state_dict(encoder);
  for (auto& entry : head->hf_state_dict()) out.push_back(std::move(entry));
  return out;
}

bool ClassifierImpl::load_head(const model::TensorDict& state) { return head->load_hf_state_dict(state); }

}  // namespace mlm::train::finetune

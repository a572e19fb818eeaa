#include "mlm/train/finetune/classifier.h"

#include <algorithm>
#include <cmath>

#include "mlm/model/bert/bert.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/kernels/dropout.h"
#include "mlm/model/layers.h"
#include "mlm/model/modernbert/modernbert.h"

namespace mlm::train::finetune {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

void normal_init(const torch::nn::Linear& layer, double std) {
  torch::NoGradGuard no_grad;
  layer->weight.normal_(0.0, std);
  layer->bias.zero_();
}

// transformers' ModernBERT: normal(0, std) cut at +-cutoff * std, drawn again outside.
void truncated_init(const torch::nn::Linear& layer, double std, double cutoff) {
  torch::NoGradGuard no_grad;
  auto& w = layer->weight;
  w.normal_(0.0, std);
  for (auto outside = w.abs().gt(cutoff * std); outside.any().item<bool>(); outside = w.abs().gt(cutoff * std)) {
    w.copy_(torch::where(outside, torch::empty_like(w).normal_(0.0, std), w));
  }
  layer->bias.zero_();
}

model::BertModelImpl* bert_of(model::MaskedLm& encoder) {
  auto* m = dynamic_cast<model::BertForPreTrainingImpl*>(encoder.get());
  return m ? m->bert.get() : nullptr;
}

}  // namespace

ClassifierImpl::ClassifierImpl(model::MaskedLm encoder_in, config::TaskKind kind_in, int64_t num_labels)
    : encoder(std::move(encoder_in)), kind(kind_in) {
  const auto& c = encoder->config();
  architecture_ = c.architecture;
  const bool sequence = kind == config::TaskKind::sequence_classification;
  const int64_t h = c.hidden_size;
  register_module("encoder", encoder.ptr());
  switch (architecture_) {
    case config::Architecture::bert:
      dropout_p_ = c.hidden_dropout_prob;
      if (sequence && !bert_of(encoder)->pooler_dense) {
        pooler = register_module("pooler", torch::nn::Linear(h, h));
        normal_init(pooler, c.initializer_range);
      }
      classifier = register_module("classifier", torch::nn::Linear(h, num_labels));
      normal_init(classifier, c.initializer_range);
      break;
    case config::Architecture::modernbert:
      dropout_p_ = 0.0;  // transformers' classifier_dropout default
      classifier = register_module("classifier", torch::nn::Linear(h, num_labels));
      truncated_init(classifier, 1.0 / std::sqrt(static_cast<double>(h)), c.initializer_cutoff_factor);
      break;
    case config::Architecture::electra:
    case config::Architecture::roberta:
    case config::Architecture::xlm_roberta:
      dropout_p_ = c.hidden_dropout_prob;
      if (sequence) {
        dense = register_module("dense", torch::nn::Linear(h, h));
        normal_init(dense, c.initializer_range);
      }
      classifier = register_module("classifier", torch::nn::Linear(h, num_labels));
      normal_init(classifier, c.initializer_range);
      break;
  }
}

torch::Tensor ClassifierImpl::dropout(const torch::Tensor& x) const {
  return model::kernels::dropout(x, dropout_p_, is_training());
}

torch::Tensor ClassifierImpl::forward(const model::MlmInputs& in) {
  // One token type (RoBERTa's): a pair's second segment is type 0 too, as RoBERTa's tokenizer,
  // which gives no token types, leaves it.
  auto inputs = in;
  if (encoder->config().type_vocab_size == 1) inputs.token_type_ids = torch::Tensor();
  const auto hidden = encoder->last_hidden_states(inputs);  // [B,S,H]
  const bool sequence = kind == config::TaskKind::sequence_classification;
  torch::Tensor features = sequence ? hidden.select(1, 0) : hidden;
  switch (architecture_) {
    case config::Architecture::bert:
      if (sequence) {
        const auto& pool = pooler ? pooler : bert_of(encoder)->pooler_dense;
        features = torch::tanh(model::linear(pool, features));
      }
      features = dropout(features);
      break;
    case config::Architecture::modernbert: {
      auto& m = *dynamic_cast<model::ModernBertForMaskedLMImpl*>(encoder.get());
      features = m.head_norm(model::activation(model::linear(m.head_dense, features),
                                               encoder->config().classifier_activation));
      features = dropout(features);
      break;
    }
    case config::Architecture::electra:
      features = dropout(features);
      if (sequence) features = dropout(torch::gelu(model::linear(dense, features)));
      break;
    case config::Architecture::roberta:
    case config::Architecture::xlm_roberta:  // RobertaClassificationHead: ELECTRA's with tanh
      features = dropout(features);
      if (sequence) features = dropout(torch::tanh(model::linear(dense, features)));
      break;
  }
  return model::linear(classifier, features).to(torch::kFloat32);
}

std::string ClassifierImpl::hf_class() const {
  const char* base = architecture_ == config::Architecture::bert          ? "Bert"
                     : architecture_ == config::Architecture::modernbert  ? "ModernBert"
                     : architecture_ == config::Architecture::roberta     ? "Roberta"
                     : architecture_ == config::Architecture::xlm_roberta ? "XLMRoberta"
                                                                          : "Electra";
  return std::string(base) + (kind == config::TaskKind::sequence_classification ? "ForSequenceClassification"
                                                                                 : "ForTokenClassification");
}

model::TensorDict ClassifierImpl::hf_state_dict() {
  model::TensorDict out;
  // An ELECTRA pair's encoder is its discriminator, with the embeddings as the export writes
  // them (under gdes the sum); a generator alone is its own.
  auto* pair = dynamic_cast<model::ElectraForPreTrainingImpl*>(encoder.get());
  const auto encoder_weights = pair ? model::to_hf_pair(*pair).discriminator : encoder->hf_state_dict();
  const std::vector<std::string> kept = architecture_ == config::Architecture::bert         ? std::vector<std::string>{"bert."}
                                        : architecture_ == config::Architecture::modernbert ? std::vector<std::string>{"model.", "head."}
                                        : config::is_roberta(architecture_)                 ? std::vector<std::string>{"roberta."}
                                                                                            : std::vector<std::string>{"electra."};
  for (const auto& [key, t] : encoder_weights) {
    if (std::any_of(kept.begin(), kept.end(), [&](const std::string& prefix) { return starts_with(key, prefix); }))
      out.emplace_back(key, t);
  }
  if (dense) {
    out.emplace_back("classifier.dense.weight", dense->weight.detach());
    out.emplace_back("classifier.dense.bias", dense->bias.detach());
  }
  if (pooler) {
    out.emplace_back("bert.pooler.dense.weight", pooler->weight.detach());
    out.emplace_back("bert.pooler.dense.bias", pooler->bias.detach());
  }
  const std::string head = dense ? "classifier.out_proj." : "classifier.";
  out.emplace_back(head + "weight", classifier->weight.detach());
  out.emplace_back(head + "bias", classifier->bias.detach());
  return out;
}

bool ClassifierImpl::load_head(const model::TensorDict& state) {
  torch::NoGradGuard no_grad;
  auto find = [&](const std::string& key) -> torch::Tensor {
    for (const auto& [k, t] : state)
      if (k == key) return t;
    return {};
  };
  const std::string head = dense ? "classifier.out_proj." : "classifier.";
  const auto weight = find(head + "weight"), bias = find(head + "bias");
  if (!weight.defined() || !bias.defined() || weight.sizes() != classifier->weight.sizes()) return false;
  classifier->weight.copy_(weight);
  classifier->bias.copy_(bias);
  if (dense) {
    const auto dw = find("classifier.dense.weight"), db = find("classifier.dense.bias");
    if (dw.defined() && db.defined()) {
      dense->weight.copy_(dw);
      dense->bias.copy_(db);
    }
  }
  if (pooler) {
    const auto pw = find("bert.pooler.dense.weight"), pb = find("bert.pooler.dense.bias");
    if (pw.defined() && pb.defined()) {
      pooler->weight.copy_(pw);
      pooler->bias.copy_(pb);
    }
  }
  return true;
}

}  // namespace mlm::train::finetune

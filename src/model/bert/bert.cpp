#include "mlm/model/bert/bert.h"
#include "mlm/model/bert/bert_keys.h"

namespace mlm::model {
namespace F = torch::nn::functional;

BertModelImpl::BertModelImpl(const config::ModelConfig& c, int64_t padded_vocab, int64_t pad_id,
                             bool with_pooler)
    : checkpoint_layers(c.activation_checkpointing) {
  embeddings = register_module("embeddings", BertEmbeddings(c, padded_vocab, pad_id));
  auto encoder = add_container(*this, "encoder");
  layers = encoder->register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(BertLayer(c));
  if (c.norm == config::NormPosition::pre)
    final_layer_norm = encoder->register_module("final_layer_norm", LayerNorm(c.hidden_size, c.layer_norm_eps));
  if (with_pooler)
    pooler_dense = add_container(*this, "pooler")
                       ->register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
}

torch::Tensor BertModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                     const torch::Tensor& attention_bias, const TokenLayout& layout) {
  return forward_at(input_ids, token_type_ids, attention_bias, torch::Tensor(), layout);
}

torch::Tensor BertModelImpl::forward_at(const torch::Tensor& input_ids,
                                        const torch::Tensor& token_type_ids,
                                        const torch::Tensor& attention_bias,
                                        const torch::Tensor& positions, const TokenLayout& layout) {
  const auto rows = layout.unpad(embeddings(input_ids, token_type_ids));
  auto x = run_bert_layers(layers, rows, attention_bias, layout, positions, checkpoint_layers, taps);
  if (final_layer_norm) x = final_layer_norm(x);
  return x;
}

torch::Tensor BertModelImpl::pool(const torch::Tensor& hidden) {
  TORCH_CHECK(pooler_dense, "this model has no pooler (model.objective is mlm)");
  return torch::tanh(linear(pooler_dense, hidden.select(1, 0)));
}

BertForPreTrainingImpl::BertForPreTrainingImpl(const config::ModelConfig& c, int64_t vocab_size,
                                               int64_t pad_id)
    : MaskedLmImpl(c, vocab_size, pad_id) {
  const bool nsp = config::trains_sentence_pairs(c.objective);
  bert = register_module("bert", BertModel(c, padded_vocab_, pad_id, nsp));
  auto cls = add_container(*this, "cls");
  // RobertaLMHead applies the exact GELU whatever the encoder's activation.
  const auto head_act = config::is_roberta(c.architecture) ? config::Activation::gelu : c.hidden_act;
  predictions = cls->register_module(
      "predictions", MlmHead(c.hidden_size, c.hidden_size, head_act, c.layer_norm_eps, padded_vocab_));
  if (nsp) seq_relationship = cls->register_module("seq_relationship", torch::nn::Linear(c.hidden_size, 2));
  init_weights();
}

void init_bert_modules(torch::nn::Module& root, double std) {
  torch::NoGradGuard no_grad;
  for (auto& module : root.modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, std);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, std);
    } else if (auto* norm = module->as<LayerNorm>()) {
      norm->weight.fill_(1.0);
      norm->bias.zero_();
    }
  }
}

void BertForPreTrainingImpl::init_weights() {
  init_bert_modules(*this, config_.initializer_range);
  zero_unused_embedding_rows();
  bert->embeddings->zero_padding_position();
  torch::NoGradGuard no_grad;
  predictions->bias.zero_();
}

MlmOutput BertForPreTrainingImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  const int64_t batch = in.input_ids.size(0), seq = in.input_ids.size(1);
  const auto bias = attention_bias_for(in, config_);  // once per batch, for every layer
  const auto layout = token_layout_for(in, config_);

  torch::Tensor logits;  // [M, padded_vocab]
  torch::Tensor hidden;  // [B,S,H], unless the sparse path below never forms it
  bert->taps = taps;     // distillation's (ForwardTaps), read by the layer loop
  const bool keep_hidden = taps && taps->last_hidden;
  if (config_.sparse_head && !seq_relationship && !keep_hidden && in.masked_positions.numel() > 0) {
    // Only the selected positions are scored and nothing reads the other positions' last
    // hidden states, so the last layer runs its queries and feed-forward block on the
    // selected positions only, and the head (H*V per position) too.
    const auto selected = SelectedPositions::from_flat(in.masked_positions, batch, seq, in.max_selected_in_row);
    const auto at = bert->forward_at(in.input_ids, in.token_type_ids, bias, selected.positions, layout);
    const auto rows = at.reshape({-1, at.size(2)}).index_select(0, selected.rows);
    logits = predictions->forward(rows, word_embeddings());
  } else {
    hidden = bert->forward(in.input_ids, in.token_type_ids, bias, layout);
    if (keep_hidden) taps->hidden = hidden;
    auto flat = hidden.reshape({batch * seq, hidden.size(2)});
    if (config_.sparse_head) {
      logits = predictions->forward(flat.index_select(0, in.masked_positions), word_embeddings());
    } else {
      logits = predictions->forward(flat, word_embeddings()).index_select(0, in.masked_positions);
    }
  }
  bert->taps = nullptr;
  MlmOutput out = score(logits, in.masked_labels, return_logits);
  if (seq_relationship && in.nsp_labels.defined()) {
    auto nsp_logits = linear(seq_relationship, bert->pool(hidden)).to(torch::kFloat32);
    out.nsp_loss_sum = F::cross_entropy(nsp_logits, in.nsp_labels,
                                        F::CrossEntropyFuncOptions().reduction(torch::kSum));
    out.nsp_correct = nsp_logits.argmax(1).eq(in.nsp_labels).sum();
  }
  return out;
}

torch::Tensor BertForPreTrainingImpl::last_hidden_states(const MlmInputs& in) {
  return bert->forward(in.input_ids, in.token_type_ids, attention_bias_for(in, config_),
                       token_layout_for(in, config_));
}

TensorDict BertForPreTrainingImpl::hf_state_dict() { return to_hf_state_dict(*this); }

TensorDict BertForPreTrainingImpl::hf_gradients() { return to_hf_gradients(*this); }

void BertForPreTrainingImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  model::load_hf_state_dict(*this, state, origin);
}

}  // namespace mlm::model

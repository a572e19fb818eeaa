#include "mlm/model/electra/electra.h"

#include "mlm/model/bert/bert.h"
#include "mlm/model/bert/encoder_layer.h"

namespace mlm::model {
namespace {

// The embeddings' config: the shared embedding module is E wide.
config::ModelConfig embedding_config(const config::ModelConfig& c) {
  auto e = c;
  e.hidden_size = config::electra_embedding_size(c);
  return e;
}

}  // namespace

ElectraBodyImpl::ElectraBodyImpl(const config::ModelConfig& c, int64_t embedding_size)
    : checkpoint_layers(c.activation_checkpointing) {
  if (embedding_size != c.hidden_size)
    embeddings_project = register_module("embeddings_project", torch::nn::Linear(embedding_size, c.hidden_size));
  layers = add_container(*this, "encoder")->register_module("layer", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(BertLayer(c));
}

torch::Tensor ElectraBodyImpl::forward(const torch::Tensor& embedded, const torch::Tensor& attention_bias,
                                       const TokenLayout& layout, const torch::Tensor& positions) {
  auto rows = layout.unpad(embedded);
  if (embeddings_project) rows = linear(embeddings_project, rows);
  return run_bert_layers(layers, rows, attention_bias, layout, positions, checkpoint_layers, taps);
}

// ---- the generator ----------------------------------------------------------------------------

ElectraForMaskedLMImpl::ElectraForMaskedLMImpl(const config::ModelConfig& c, int64_t vocab_size, int64_t pad_id)
    : RtdGeneratorImpl(c, vocab_size, pad_id) {
  const int64_t e = config::electra_embedding_size(c);
  embeddings = register_module("embeddings", BertEmbeddings(embedding_config(c), padded_vocab_, pad_id));
  body = register_module("body", ElectraBody(c, e));
  // transformers' ElectraGeneratorPredictions applies "gelu" whatever hidden_act says.
  predictions = register_module(
      "predictions", MlmHead(c.hidden_size, e, config::Activation::gelu, c.layer_norm_eps, padded_vocab_));
  init_weights();
}

void ElectraForMaskedLMImpl::init_weights() {
  init_bert_modules(*this, config_.initializer_range);
  zero_unused_embedding_rows();
  torch::NoGradGuard no_grad;
  predictions->bias.zero_();
}

torch::Tensor ElectraForMaskedLMImpl::selected_logits(const MlmInputs& in) {
  const int64_t batch = in.input_ids.size(0), seq = in.input_ids.size(1);
  const auto bias = attention_bias_for(in, config_);
  const auto layout = token_layout_for(in, config_);
  const auto embedded = embeddings(in.input_ids, in.token_type_ids);
  torch::Tensor rows;  // [M, H]
  // Distillation's taps (ForwardTaps): the hidden states of every position need the dense path.
  const bool keep_hidden = taps && taps->last_hidden;
  body->taps = taps;
  if (config_.sparse_head && !keep_hidden && in.masked_positions.numel() > 0) {
    // The last layer runs on the selected positions only.
    const auto selected = SelectedPositions::from_flat(in.masked_positions, batch, seq, in.max_selected_in_row);
    const auto at = body(embedded, bias, layout, selected.positions);
    rows = at.reshape({-1, at.size(2)}).index_select(0, selected.rows);
  } else {
    const auto hidden = body(embedded, bias, layout);
    if (keep_hidden) taps->hidden = hidden;
    rows = hidden.reshape({batch * seq, hidden.size(2)}).index_select(0, in.masked_positions);
  }
  body->taps = nullptr;
  return predictions->forward(rows, word_embeddings());
}

MlmOutput ElectraForMaskedLMImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  return score(selected_logits(in), in.masked_labels, return_logits);
}

torch::Tensor ElectraForMaskedLMImpl::last_hidden_states(const MlmInputs& in) {
  return body(embeddings(in.input_ids, in.token_type_ids), attention_bias_for(in, config_),
              token_layout_for(in, config_));
}

// ---- the discriminator's head ------------------------------------------------------------------

DiscriminatorHeadImpl::DiscriminatorHeadImpl(const config::ModelConfig& c) : act_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  dense_prediction = register_module("dense_prediction", torch::nn::Linear(c.hidden_size, 1));
}

torch::Tensor DiscriminatorHeadImpl::forward(const torch::Tensor& hidden) {
  return linear(dense_prediction, activation(linear(dense, hidden), act_)).squeeze(-1);
}

}  // namespace mlm::model

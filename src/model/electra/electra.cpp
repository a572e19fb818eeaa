#include "mlm/model/electra/electra.h"

#include "mlm/model/bert/bert.h"
#include "mlm/model/bert/encoder_layer.h"
#include "mlm/model/electra/replaced_tokens.h"
#include "mlm/model/kernels/gumbel_max.h"

namespace mlm::model {
namespace {

// The embeddings' config: the shared embedding module is E wide.
config::ModelConfig embedding_config(const config::ModelConfig& c) {
  auto e = c;
  e.hidden_size = config::electra_embedding_size(c);
  return e;
}

}  // namespace

config::ModelConfig generator_config(const config::ModelConfig& c) {
  const auto shape = config::generator_shape(c);
  auto g = c;
  g.hidden_size = shape.hidden_size;
  g.num_hidden_layers = shape.num_hidden_layers;
  g.num_attention_heads = shape.num_attention_heads;
  g.intermediate_size = shape.intermediate_size;
  g.embedding_size = config::electra_embedding_size(c);
  g.objective = config::Objective::mlm;
  return g;
}

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
  return run_bert_layers(layers, rows, attention_bias, layout, positions, checkpoint_layers);
}

// ---- the generator ----------------------------------------------------------------------------

ElectraForMaskedLMImpl::ElectraForMaskedLMImpl(const config::ModelConfig& c, int64_t vocab_size, int64_t pad_id)
    : MaskedLmImpl(c, vocab_size, pad_id) {
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

torch::Tensor ElectraForMaskedLMImpl::selected_logits(const MlmInputs& in, const torch::Tensor& embedded,
                                                      const torch::Tensor& bias, const TokenLayout& layout) {
  const int64_t batch = in.input_ids.size(0), seq = in.input_ids.size(1);
  torch::Tensor rows;  // [M, H]
  if (config_.sparse_head && in.masked_positions.numel() > 0) {
    const auto selected = SelectedPositions::from_flat(in.masked_positions, batch, seq, in.max_selected_in_row);
    const auto at = body(embedded, bias, layout, selected.positions);
    rows = at.reshape({-1, at.size(2)}).index_select(0, selected.rows);
  } else {
    const auto hidden = body(embedded, bias, layout);
    rows = hidden.reshape({batch * seq, hidden.size(2)}).index_select(0, in.masked_positions);
  }
  return predictions->forward(rows, word_embeddings());
}

MlmOutput ElectraForMaskedLMImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  const auto bias = attention_bias_for(in, config_);
  const auto layout = token_layout_for(in, config_);
  const auto logits = selected_logits(in, embeddings(in.input_ids, in.token_type_ids), bias, layout);
  return score(logits, in.masked_labels, return_logits);
}

torch::Tensor ElectraForMaskedLMImpl::last_hidden_states(const MlmInputs& in) {
  return body(embeddings(in.input_ids, in.token_type_ids), attention_bias_for(in, config_),
              token_layout_for(in, config_));
}

// ---- the discriminator and the pair -----------------------------------------------------------

DiscriminatorHeadImpl::DiscriminatorHeadImpl(const config::ModelConfig& c) : act_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  dense_prediction = register_module("dense_prediction", torch::nn::Linear(c.hidden_size, 1));
}

torch::Tensor DiscriminatorHeadImpl::forward(const torch::Tensor& hidden) {
  return linear(dense_prediction, activation(linear(dense, hidden), act_)).squeeze(-1);
}

ElectraForPreTrainingImpl::ElectraForPreTrainingImpl(const config::ModelConfig& c, int64_t vocab_size,
                                                     int64_t pad_id)
    : MaskedLmImpl(c, vocab_size, pad_id) {
  TORCH_CHECK(c.objective == config::Objective::rtd, "ElectraForPreTraining trains objective rtd");
  const int64_t e = config::electra_embedding_size(c);
  generator = register_module("generator", ElectraForMaskedLM(generator_config(c), vocab_size, pad_id));
  if (c.embedding_sharing == config::EmbeddingSharing::gdes)
    word_embeddings_delta = register_parameter("word_embeddings_delta", torch::zeros({padded_vocab_, e}));
  discriminator = register_module("discriminator", ElectraBody(c, e));
  discriminator_predictions = register_module("discriminator_predictions", DiscriminatorHead(c));
  init_weights();
}

void ElectraForPreTrainingImpl::init_weights() {
  // One draw order for the whole pair: the generator's modules first, then the
  // discriminator's, as modules() lists them.
  init_bert_modules(*this, config_.initializer_range);
  zero_unused_embedding_rows();
  torch::NoGradGuard no_grad;
  generator->predictions->bias.zero_();
  if (gdes()) word_embeddings_delta.zero_();  // DeBERTa-v3: the discriminator starts as the generator
}

torch::Tensor ElectraForPreTrainingImpl::discriminator_embeddings(const torch::Tensor& ids,
                                                                  const torch::Tensor& token_type_ids) {
  auto& shared = generator->embeddings;
  if (!gdes()) return shared(ids, token_type_ids);
  namespace F = torch::nn::functional;
  // (E_G)[i] + delta[i] = (sg(E_G) + delta)[i]: the generator's vectors carry no gradient back.
  const auto words = F::embedding(ids, word_embeddings().detach()) +
                     F::embedding(ids, word_embeddings_delta, F::EmbeddingFuncOptions().padding_idx(pad_id_));
  return shared->embed(words, token_type_ids);
}

MlmOutput ElectraForPreTrainingImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  const auto bias = attention_bias_for(in, config_);  // once per batch, for both networks
  const auto layout = token_layout_for(in, config_);

  const auto generator_logits =
      generator->selected_logits(in, generator->embeddings(in.input_ids, in.token_type_ids), bias, layout);
  MlmOutput out = generator->score_logits(generator_logits, in.masked_labels, return_logits);

  // The generator's samples replace the selected positions; no gradient flows through them.
  const auto samples = in.rtd_samples.defined()
                           ? in.rtd_samples
                           : kernels::gumbel_max_sample(generator_logits, vocab_size_, config_.rtd_temperature,
                                                        in.sample_seed);
  const auto corrupted = corrupt(in.input_ids, in.masked_positions, in.masked_labels, samples);

  const auto hidden = discriminator(discriminator_embeddings(corrupted.input_ids, in.token_type_ids), bias, layout);
  const auto logits = discriminator_predictions(hidden).to(torch::kFloat32);
  const auto padding_mask = in.has_padding ? in.attention_mask : torch::Tensor();
  score_replaced(logits, corrupted, padding_mask, samples, in.masked_labels, out);
  if (return_logits) {
    // The padding's logits depend on whether the layers ran unpadded: 0 there, whatever ran.
    out.rtd_logits = padding_mask.defined() ? logits.detach().masked_fill(padding_mask.eq(0), 0.0f) : logits.detach();
  }
  return out;
}

torch::Tensor ElectraForPreTrainingImpl::last_hidden_states(const MlmInputs& in) {
  return discriminator(discriminator_embeddings(in.input_ids, in.token_type_ids), attention_bias_for(in, config_),
                       token_layout_for(in, config_));
}

}  // namespace mlm::model

#include "mlm/model/deberta/deberta.h"

#include "mlm/model/bert/bert.h"
#include "mlm/model/checkpointed_layer.h"
#include "mlm/model/kernels/dropout.h"

namespace mlm::model {
namespace nn = torch::nn;

DebertaV2EmbeddingsImpl::DebertaV2EmbeddingsImpl(const config::ModelConfig& c, int64_t padded_vocab, int64_t pad_id,
                                                 bool own_tables)
    : dropout_(c.hidden_dropout_prob) {
  const int64_t e = config::electra_embedding_size(c);
  if (own_tables) {
    word_embeddings = register_module("word_embeddings",
                                      nn::Embedding(nn::EmbeddingOptions(padded_vocab, e).padding_idx(pad_id)));
    if (c.position_biased_input)
      position_embeddings = register_module("position_embeddings", nn::Embedding(c.max_position_embeddings, e));
    if (c.type_vocab_size > 0)
      token_type_embeddings = register_module("token_type_embeddings", nn::Embedding(c.type_vocab_size, e));
  }
  if (e != c.hidden_size)
    embed_proj = register_module("embed_proj", nn::Linear(nn::LinearOptions(e, c.hidden_size).bias(false)));
  layer_norm = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
}

torch::Tensor DebertaV2EmbeddingsImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                               const torch::Tensor& attention_mask) {
  return normalize(add_tables(word_embeddings(input_ids), token_type_ids), attention_mask);
}

torch::Tensor DebertaV2EmbeddingsImpl::add_tables(const torch::Tensor& words, const torch::Tensor& token_type_ids) {
  auto x = words;
  if (position_embeddings) {
    const auto positions = torch::arange(words.size(1), torch::dtype(torch::kLong).device(words.device()));
    x = x + position_embeddings(positions).unsqueeze(0);
  }
  if (token_type_embeddings) {
    const auto types = token_type_ids.defined()
                           ? token_type_ids
                           : torch::zeros({words.size(0), words.size(1)}, torch::dtype(torch::kLong).device(words.device()));
    x = x + token_type_embeddings(types);
  }
  return x;
}

torch::Tensor DebertaV2EmbeddingsImpl::normalize(const torch::Tensor& embedded, const torch::Tensor& attention_mask) {
  auto x = embedded;
  if (embed_proj) x = linear(embed_proj, x);
  x = layer_norm(x);
  if (attention_mask.defined()) x = x * attention_mask.unsqueeze(2).to(x.scalar_type());
  return kernels::dropout(x, dropout_, is_training());
}

DebertaV2ModelImpl::DebertaV2ModelImpl(const config::ModelConfig& c, int64_t padded_vocab, int64_t pad_id,
                                       bool own_tables)
    : checkpoint_layers(c.activation_checkpointing),
      buckets_(c.position_buckets),
      max_relative_(config::max_relative_positions(c)),
      span_(config::relative_span(c)) {
  embeddings = register_module("embeddings", DebertaV2Embeddings(c, padded_vocab, pad_id, own_tables));
  auto encoder = add_container(*this, "encoder");
  layers = encoder->register_module("layer", nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(DebertaV2Layer(c));
  if (c.relative_attention) {
    rel_embeddings =
        encoder->register_module("rel_embeddings", nn::Embedding(2 * config::relative_span(c), c.hidden_size));
  }
  if (c.norm_rel_ebd == "layer_norm")
    rel_norm = encoder->register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
}

torch::Tensor DebertaV2ModelImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                                          const torch::Tensor& attention_mask, const torch::Tensor& bias) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B,S], got ", input_ids.sizes());
  return encode(embeddings(input_ids, token_type_ids, attention_mask), bias);
}

torch::Tensor DebertaV2ModelImpl::hidden_states(const torch::Tensor& embedded, const MlmInputs& in,
                                                const torch::Tensor& bias, const TokenLayout&) {
  return encode(embeddings->normalize(embedded, in.has_padding ? in.attention_mask : torch::Tensor()), bias);
}

std::pair<torch::Tensor, RelativeWindow> DebertaV2ModelImpl::relative_rows(int64_t seq, const torch::Device& device) {
  if (!rel_embeddings) return {};
  auto window = deberta_relative_window(seq, buckets_, max_relative_, span_, device);
  // The rows the window reads, normed (row by row, so narrowing first changes nothing).
  auto rel = rel_embeddings->weight.narrow(0, window.first, window.width);
  if (rel_norm) rel = rel_norm(rel);
  return {rel, window};
}

torch::Tensor DebertaV2ModelImpl::encode(const torch::Tensor& embedded, const torch::Tensor& bias) {
  auto x = embedded;
  const auto relative = relative_rows(x.size(1), x.device());
  const torch::Tensor rel = relative.first, rel_index = relative.second.index;
  for (size_t i = 0; i < layers->size(); ++i) {
    auto* layer = layers[i]->as<DebertaV2Layer>();
    if (taps && taps->qkv_layer == static_cast<int64_t>(i)) {  // distillation: what self_attention projects
      taps->qkv = torch::cat({linear(layer->query_proj, x), linear(layer->key_proj, x), linear(layer->value_proj, x)}, -1);
    }
    // By value: a checkpointed layer runs again in the backward pass, after this returns.
    auto run_layer = [layer, bias, rel, rel_index](const torch::Tensor& rows) {
      return layer->forward(rows, bias, rel, rel_index);
    };
    x = checkpoint_layers ? checkpointed_layer(run_layer, x) : run_layer(x);
  }
  return x;
}

DebertaV2ForMaskedLMImpl::DebertaV2ForMaskedLMImpl(const config::ModelConfig& c, int64_t vocab_size, int64_t pad_id)
    : RtdGeneratorImpl(c, vocab_size, pad_id) {
  deberta = register_module("deberta", DebertaV2Model(c, padded_vocab_, pad_id));
  predictions = add_container(*this, "cls")->register_module(
      "predictions", MlmHead(c.hidden_size, config::electra_embedding_size(c), c.hidden_act, c.layer_norm_eps,
                             padded_vocab_));
  init_weights();
}

void DebertaV2ForMaskedLMImpl::init_weights() {
  init_bert_modules(*this, config_.initializer_range);
  zero_unused_embedding_rows();
  torch::NoGradGuard no_grad;
  predictions->bias.zero_();
}

torch::Tensor DebertaV2ForMaskedLMImpl::last_hidden_states(const MlmInputs& in) {
  const auto mask = in.has_padding ? in.attention_mask : torch::Tensor();
  return deberta->forward(in.input_ids, in.token_type_ids, mask, attention_bias_for(in, config_));
}

torch::Tensor DebertaV2ForMaskedLMImpl::selected_logits(const MlmInputs& in) {
  deberta->taps = taps;  // distillation's (ForwardTaps), read by the layer loop
  const auto hidden = last_hidden_states(in);
  deberta->taps = nullptr;
  if (taps && taps->last_hidden) taps->hidden = hidden;
  // The head on the selected positions alone: what transformers' head gives there, whatever
  // model.sparse_head says (the other positions' logits are never read).
  const auto rows = hidden.reshape({-1, hidden.size(2)}).index_select(0, in.masked_positions);
  return predictions->forward(rows, word_embeddings());
}

MlmOutput DebertaV2ForMaskedLMImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  return score(selected_logits(in), in.masked_labels, return_logits);
}

}  // namespace mlm::model

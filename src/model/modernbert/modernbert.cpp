#include "mlm/model/modernbert/modernbert.h"

#include "mlm/model/checkpointed_layer.h"
#include "mlm/model/kernels/dropout.h"

#include <cmath>

namespace mlm::model {
namespace nn = torch::nn;

ModernBertModelImpl::ModernBertModelImpl(const config::ModelConfig& c, int64_t padded_vocab, int64_t pad_id)
    : global_every_(c.global_attn_every_n_layers),
      head_dim_(c.hidden_size / c.num_attention_heads),
      global_theta_(c.global_rope_theta),
      local_theta_(c.local_rope_theta),
      embedding_dropout_(c.embedding_dropout) {
  checkpoint_layers = c.activation_checkpointing;
  auto embeddings = add_container(*this, "embeddings");
  tok_embeddings = embeddings->register_module(
      "tok_embeddings", nn::Embedding(nn::EmbeddingOptions(padded_vocab, c.hidden_size).padding_idx(pad_id)));
  embedding_norm = embeddings->register_module("norm", LayerNorm(c.hidden_size, c.layer_norm_eps, c.norm_bias));
  layers = register_module("layers", nn::ModuleList());
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) layers->push_back(ModernBertLayer(c, i));
  final_norm = register_module("final_norm", LayerNorm(c.hidden_size, c.layer_norm_eps, c.norm_bias));
}

torch::Tensor ModernBertModelImpl::run(const torch::Tensor& input_ids, const ModernBertMasks& masks,
                                       const torch::Tensor& positions) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B,S], got ", input_ids.sizes());
  const int64_t seq = input_ids.size(1);
  const auto device = input_ids.device();
  const auto global_rotary = RotaryTable::build(seq, head_dim_, global_theta_, device);
  const auto local_rotary = RotaryTable::build(seq, head_dim_, local_theta_, device);
  const auto& local = masks.local.defined() ? masks.local : masks.global;

  // Embedded as the layers' rows: the real tokens alone when unpadded.
  const auto& layout = masks.tokens;
  auto x = kernels::dropout(embedding_norm(tok_embeddings(layout.unpad(input_ids))), embedding_dropout_,
                            is_training());
  const int64_t last = static_cast<int64_t>(layers->size()) - 1;
  for (int64_t i = 0; i <= last; ++i) {
    auto& layer = *layers[i]->as<ModernBertLayer>();
    if (taps && taps->qkv_layer == i) {  // distillation: the projection the attention makes of its input
      const auto normed = layer.attn_norm ? layer.attn_norm(x) : x;
      taps->qkv = layout.pad(at::linear(normed, layer.Wqkv->weight, layer.Wqkv->bias));
    }
    const bool global = is_global(i);
    const auto& bias = global ? masks.global : local;
    const auto& rotary = global ? global_rotary : local_rotary;
    const bool banded = !global && masks.banded;
    std::function<torch::Tensor(const torch::Tensor&)> run_layer;
    if (i == last && positions.defined()) {
      // The sparse last layer gathers its queries by position, from the padded batch.
      run_layer = [&layer, bias, rotary, positions, layout](const torch::Tensor& rows) {
        return layer.forward_at(layout.pad(rows), bias, rotary, positions);
      };
    } else {
      // By value: a checkpointed layer runs again in the backward pass, after this returns.
      std::optional<BandedWindow> window;
      if (banded) window = *masks.banded;
      run_layer = [&layer, bias, rotary, window, layout](const torch::Tensor& rows) {
        return layer.forward(rows, bias, rotary, window ? &*window : nullptr, layout);
      };
    }
    x = checkpoint_layers ? checkpointed_layer(run_layer, x) : run_layer(x);
    if (i == last && positions.defined()) return final_norm(x);
  }
  return layout.pad(final_norm(x));
}

torch::Tensor ModernBertModelImpl::forward(const torch::Tensor& input_ids, const ModernBertMasks& masks) {
  return run(input_ids, masks, torch::Tensor());
}

torch::Tensor ModernBertModelImpl::forward_at(const torch::Tensor& input_ids, const ModernBertMasks& masks,
                                              const torch::Tensor& positions) {
  return run(input_ids, masks, positions);
}

void ModernBertForMaskedLMImpl::apply_phase_settings(const config::ModelConfig& phase) {
  MaskedLmImpl::apply_phase_settings(phase);
  model->set_rope_theta(phase.global_rope_theta, phase.local_rope_theta);
  model->checkpoint_layers = phase.activation_checkpointing;
  config_.global_rope_theta = phase.global_rope_theta;
  config_.local_rope_theta = phase.local_rope_theta;
}

ModernBertForMaskedLMImpl::ModernBertForMaskedLMImpl(const config::ModelConfig& c, int64_t vocab_size,
                                                     int64_t pad_id)
    : MaskedLmImpl(c, vocab_size, pad_id) {
  model = register_module("model", ModernBertModel(c, padded_vocab_, pad_id));
  auto head = add_container(*this, "head");
  head_dense = head->register_module(
      "dense", nn::Linear(nn::LinearOptions(c.hidden_size, c.hidden_size).bias(c.classifier_bias)));
  head_norm = head->register_module("norm", LayerNorm(c.hidden_size, c.layer_norm_eps, c.norm_bias));
  if (c.decoder_bias) {
    decoder_bias = add_container(*this, "decoder")->register_parameter("bias", torch::zeros({padded_vocab_}));
  }
  init_weights();
}

void truncated_normal_(torch::Tensor w, double std, double cutoff) {
  const double bound = cutoff * std;
  w.normal_(0.0, std);
  for (auto outside = w.abs().gt(bound); outside.any().item<bool>(); outside = w.abs().gt(bound)) {
    w.copy_(torch::where(outside, torch::empty_like(w).normal_(0.0, std), w));
  }
}

void ModernBertForMaskedLMImpl::init_weights() {
  torch::NoGradGuard no_grad;
  const auto& c = config_;
  const double cutoff = c.initializer_cutoff_factor;
  const double in_std = c.initializer_range;
  const double out_std = c.initializer_range / std::sqrt(2.0 * static_cast<double>(c.num_hidden_layers));
  auto init = [&](const nn::Linear& linear, double std) {
    truncated_normal_(linear->weight, std, cutoff);
    if (linear->bias.defined()) linear->bias.zero_();
  };
  truncated_normal_(word_embeddings(), in_std, cutoff);
  for (const auto& module : *model->layers) {
    auto& layer = *module->as<ModernBertLayer>();
    init(layer.Wqkv, in_std);
    init(layer.attn_Wo, out_std);
    init(layer.Wi, in_std);
    init(layer.mlp_Wo, out_std);
  }
  init(head_dense, out_std);
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* norm = module->as<LayerNorm>()) {
      norm->weight.fill_(1.0);
      if (norm->bias.defined()) norm->bias.zero_();
    }
  }
  // Unlike BERT's, the reference leaves the [PAD] row drawn; only the padding rows are ours.
  word_embeddings().narrow(0, vocab_size_, padded_vocab_ - vocab_size_).zero_();
  if (decoder_bias.defined()) decoder_bias.zero_();
}

torch::Tensor ModernBertForMaskedLMImpl::logits(const torch::Tensor& hidden) {
  const auto h = head_norm(activation(linear(head_dense, hidden), config_.classifier_activation));
  return at::linear(h, word_embeddings(), decoder_bias);
}

ModernBertMasks ModernBertForMaskedLMImpl::masks_for(const MlmInputs& in, bool last_layer_sparse) const {
  ModernBertMasks masks;
  masks.global = attention_bias_for(in, config_);
  masks.tokens = token_layout_for(in, config_);
  const int64_t batch = in.input_ids.size(0), seq = in.input_ids.size(1), half = config_.local_attention / 2;
  if (seq - 1 <= half) return masks;  // the window spans the sequence: local = global
  const auto device = in.input_ids.device();
  const bool documents = !config_.attend_across_documents && in.document_ids.defined();
  const torch::Tensor mask = in.has_padding ? in.attention_mask : torch::Tensor();
  // Padding as a document of its own (-1): a padding query still sees itself, no row is empty.
  torch::Tensor ids;
  if (documents || mask.defined()) {
    ids = padding_as_document(documents ? in.document_ids : torch::zeros_like(in.input_ids), mask);
  }
  const int64_t last = config_.num_hidden_layers - 1;
  const bool last_local = !model->is_global(last);
  if (banded_window_pays(seq, half)) masks.banded = banded_window(batch, seq, half, ids, device, compute_dtype(device));
  if (!masks.banded || (last_layer_sparse && last_local)) {
    auto allowed = sliding_window_mask(seq, half, device);
    if (ids.defined()) allowed = allowed & same_document_mask(ids, torch::Tensor());
    masks.local = attention_bias_from_allowed(allowed, compute_dtype(device));
  }
  return masks;
}

torch::Tensor ModernBertForMaskedLMImpl::last_hidden_states(const MlmInputs& in) {
  return model->forward(in.input_ids, masks_for(in, /*last_layer_sparse=*/false));
}

MlmOutput ModernBertForMaskedLMImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  const int64_t batch = in.input_ids.size(0), seq = in.input_ids.size(1);
  const bool keep_hidden = taps && taps->last_hidden;
  const bool sparse = config_.sparse_head && !keep_hidden && in.masked_positions.numel() > 0;
  const auto masks = masks_for(in, sparse);  // once per batch, for every layer
  model->taps = taps;  // distillation's (ForwardTaps), read by the layer loop

  torch::Tensor scores;  // [M, padded_vocab]
  if (sparse) {
    // Only the selected positions are scored: the last layer's queries and feed-forward block
    // and the head run on them alone.
    const auto selected = SelectedPositions::from_flat(in.masked_positions, batch, seq, in.max_selected_in_row);
    const auto at = model->forward_at(in.input_ids, masks, selected.positions);
    scores = logits(at.reshape({-1, at.size(2)}).index_select(0, selected.rows));
  } else {
    const auto hidden = model->forward(in.input_ids, masks);
    const auto flat = hidden.reshape({batch * seq, hidden.size(2)});
    if (keep_hidden) {
      // Distillation reads every position's hidden states; the head still scores the selected ones.
      taps->hidden = hidden;
      scores = logits(flat.index_select(0, in.masked_positions));
    } else {
      scores = logits(flat).index_select(0, in.masked_positions);
    }
  }
  model->taps = nullptr;
  return score(scores, in.masked_labels, return_logits);
}

}  // namespace mlm::model

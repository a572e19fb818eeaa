#pragma once
// ModernBERT for masked-language-model pretraining, as `transformers`' ModernBertForMaskedLM
// computes it: token embeddings and a norm (no position or token-type embeddings), layers of
// rotary self-attention and GeGLU feed-forward (modernbert_layer.h), every
// model.global_attn_every_n_layers-th layer attending globally (RoPE base global_rope_theta)
// and the others within a sliding window of model.local_attention (local_rope_theta), a final
// norm, the prediction head (dense, activation, norm) and a decoder tied to the embeddings.
//
// Module tree (named_parameters(), transformers' names): model.embeddings.tok_embeddings.weight,
//   model.embeddings.norm.*, model.layers.N.{attn_norm (N > 0),attn.Wqkv,attn.Wo,mlp_norm,
//   mlp.Wi,mlp.Wo}.*, model.final_norm.*, head.dense.*, head.norm.*, decoder.bias
//   (model.decoder_bias). Norm biases and linear biases exist only when the config asks.
// tok_embeddings and decoder.bias have padded_vocab_size() rows; the padded rows start at
// zero, get no gradient and never reach the loss or the HF format.
#include <torch/torch.h>

#include <optional>

#include "mlm/model/layers.h"
#include "mlm/model/masked_lm.h"
#include "mlm/model/modernbert/modernbert_layer.h"

namespace mlm::model {

/// What the layers may attend to, built once per batch (ModernBertForMaskedLMImpl::masks_for).
struct ModernBertMasks {
  torch::Tensor global;                 // global layers' bias (attention_bias_for)
  std::optional<BandedWindow> banded;   // local layers, block by block, when that pays
  torch::Tensor local;                  // local layers' bias over all S keys: without `banded`
                                        //   (undefined: the window spans the sequence, use
                                        //   `global`), or for a sparse last layer
  TokenLayout tokens;                   // the rows the layers run on: the real tokens alone
                                        //   when unpadding pays (TokenLayout::of)
};

/// The encoder ("model"): embeddings, layers, final norm.
struct ModernBertModelImpl : torch::nn::Module {
  ModernBertModelImpl(const config::ModelConfig& config, int64_t padded_vocab, int64_t pad_id);

  /// The last hidden states [B,S,H] (fp32).
  torch::Tensor forward(const torch::Tensor& input_ids, const ModernBertMasks& masks);
  /// The last hidden states at `positions` [B,R] only, the last layer run on those positions.
  torch::Tensor forward_at(const torch::Tensor& input_ids, const ModernBertMasks& masks,
                           const torch::Tensor& positions);

  /// Layer i attends globally (the others within the sliding window).
  bool is_global(int64_t layer) const { return layer % global_every_ == 0; }
  void set_rope_theta(double global_theta, double local_theta) {
    global_theta_ = global_theta;
    local_theta_ = local_theta;
  }
  bool checkpoint_layers = false;  // model.activation_checkpointing
  ForwardTaps* taps = nullptr;     // the MaskedLm's, during its forward

  torch::nn::Embedding tok_embeddings{nullptr};  // "embeddings.tok_embeddings"
  LayerNorm embedding_norm{nullptr};             // "embeddings.norm"
  torch::nn::ModuleList layers{nullptr};         // "layers"
  LayerNorm final_norm{nullptr};                 // "final_norm"

 private:
  torch::Tensor run(const torch::Tensor& input_ids, const ModernBertMasks& masks, const torch::Tensor& positions);

  int64_t global_every_, head_dim_;
  double global_theta_, local_theta_, embedding_dropout_;
};
TORCH_MODULE(ModernBertModel);

class ModernBertForMaskedLMImpl : public MaskedLmImpl {
 public:
  /// Initialised as transformers does: weights ~ normal truncated at +-initializer_cutoff_factor
  /// std, std initializer_range for the embeddings, Wqkv and Wi, and initializer_range /
  /// sqrt(2 * layers) for both Wo and head.dense; zero biases, norms 1; padded rows zero.
  ModernBertForMaskedLMImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) override;
  torch::Tensor last_hidden_states(const MlmInputs& inputs) override;
  void init_weights() override;
  torch::Tensor word_embeddings() const override { return model->tok_embeddings->weight; }
  TensorDict hf_state_dict() override;
  TensorDict hf_gradients() override;
  void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) override;
  void apply_phase_settings(const config::ModelConfig& phase) override;

  /// The masks of `inputs`: the global bias (padding, documents), and for the sliding-window
  /// layers the window ANDed with the same: block by block when that pays, over all S keys
  /// when not or when `last_layer_sparse` and the last layer is a local one.
  ModernBertMasks masks_for(const MlmInputs& inputs, bool last_layer_sparse) const;

  ModernBertModel model{nullptr};
  torch::nn::Linear head_dense{nullptr};  // "head.dense"
  LayerNorm head_norm{nullptr};           // "head.norm"
  torch::Tensor decoder_bias;             // "decoder.bias", undefined without model.decoder_bias

 private:
  /// The prediction head and the tied decoder: hidden [N,H] -> logits [N, padded_vocab].
  torch::Tensor logits(const torch::Tensor& hidden);
};
TORCH_MODULE(ModernBertForMaskedLM);

/// normal(0, std) truncated to [-cutoff * std, cutoff * std], redrawing what falls outside
/// (what torch.nn.init.trunc_normal_ does when most of the mass is inside, as at cutoff 2):
/// transformers' ModernBERT initialisation.
void truncated_normal_(torch::Tensor w, double std, double cutoff);

}  // namespace mlm::model

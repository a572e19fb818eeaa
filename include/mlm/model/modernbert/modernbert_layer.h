#pragma once
// One ModernBERT encoder layer, as `transformers` computes it: pre-norm (layer 0 has no
// attention norm: the embeddings were just normalised), self-attention through one fused
// Wqkv product with rotary positions, Wo, a residual; then a GeGLU feed-forward block
// (Wi gives input and gate, act(input) * gate, Wo) after its norm, and a residual.
// Parameter names are transformers': attn_norm, attn.Wqkv, attn.Wo, mlp_norm, mlp.Wi, mlp.Wo.
// Whether the layer is global or local is only which attention bias and rotary table the
// model hands it.
#include <torch/torch.h>

#include "mlm/config/sections/model.h"
#include "mlm/model/layers.h"
#include "mlm/model/modernbert/local_attention.h"
#include "mlm/model/modernbert/rotary.h"

namespace mlm::model {

struct ModernBertLayerImpl : torch::nn::Module {
  ModernBertLayerImpl(const config::ModelConfig& config, int64_t index);

  /// x: [B,S,H], or the real tokens' rows [T,H] of an unpadded `layout` (the output is laid
  /// out as x); attention_bias: as BertLayerImpl's ([B,1,1,S], [B or 1,1,S,S], or undefined
  /// for none), or `banded` (not null) for a sliding window computed block by block;
  /// rotary: the [S,D] table of this layer's theta.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                        const RotaryTable& rotary, const BandedWindow* banded = nullptr,
                        const TokenLayout& layout = {});

  /// The layer's output at `positions` [B,R] only: forward() gathered there, with the query,
  /// Wo and the feed-forward block run on those positions (keys and values from every one);
  /// attention_bias over all S keys.
  torch::Tensor forward_at(const torch::Tensor& x, const torch::Tensor& attention_bias,
                           const RotaryTable& rotary, const torch::Tensor& positions);

  LayerNorm attn_norm{nullptr};  // undefined in layer 0
  torch::nn::Linear Wqkv{nullptr}, attn_Wo{nullptr};
  LayerNorm mlp_norm{nullptr};
  torch::nn::Linear Wi{nullptr}, mlp_Wo{nullptr};

 private:
  /// Attention output (after Wo) for `queries` [B,R,H] at rotary rows `query_rotary`, keys
  /// and values from `x` [B,S,H] (queries == x: one fused product, x then possibly the [T,H]
  /// rows of `layout`, and the output too).
  torch::Tensor attention(const torch::Tensor& queries, const torch::Tensor& x, const torch::Tensor& bias,
                          const RotaryTable& query_rotary, const RotaryTable& rotary,
                          const BandedWindow* banded = nullptr, const TokenLayout& layout = {});

  /// Attention of padded heads [B,A,R,D] (rotated here) under `bias` or `banded`, as x's
  /// layout: [B,R,H], or the [T,H] rows of an unpadded `layout`.
  torch::Tensor padded_attention(const QkvHeads& heads, const torch::Tensor& bias, const RotaryTable& query_rotary,
                                 const RotaryTable& rotary, const BandedWindow* banded, double p,
                                 const TokenLayout& layout);

  /// h + the GeGLU block of norm(h).
  torch::Tensor feed_forward(const torch::Tensor& h);

  int64_t heads_;
  config::Activation act_;
  double attention_dropout_, mlp_dropout_;
  int64_t half_window_;  // local layers: model.local_attention / 2; global ones: kNoWindow
};
TORCH_MODULE(ModernBertLayer);

}  // namespace mlm::model

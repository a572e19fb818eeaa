#pragma once
// One BERT encoder layer: multi-head self-attention and a GELU feed-forward block, each with
// a residual connection and LayerNorm, after (post-LN, BERT) or before (pre-LN) the block.
//
// Parameter names follow Hugging Face (attention.output.dense, attention.output.LayerNorm,
// intermediate.dense, output.dense, output.LayerNorm) except that query, key and value are one
// fused matrix `attention.self.qkv` [3H, H] (rows: query, key, value), so the projection is a
// single matrix product; the HF weight format splits it (hf_weights.cpp).
// Pre-LN reuses the two LayerNorm names for the norms *before* each block:
// attention.output.LayerNorm normalises the attention input, output.LayerNorm the FFN input.
#include <torch/torch.h>

#include "mlm/config/sections/model.h"
#include "mlm/model/layers.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

struct BertLayerImpl : torch::nn::Module {
  explicit BertLayerImpl(const config::ModelConfig& config);

  /// x: [B,S,H], or the real tokens' rows [T,H] of an unpadded `layout` (the output is laid
  /// out as x); attention_bias: [B,1,1,S] from attention_bias_from_mask, [B,1,S,S] (per
  /// query: documents apart, attention_bias_for), or undefined when the batch has no padding
  /// (no mask is applied at all then).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                        const TokenLayout& layout = {});

  /// The layer's output at `positions` only: [B,R] indices into S per row (a row with fewer
  /// positions repeats one), giving [B,R,H] = forward(x, attention_bias) gathered there;
  /// undefined positions = forward(x, attention_bias). A per-query bias is cut to the R rows.
  /// Keys and values still come from every position; the query, output projection and
  /// feed-forward block run on the R positions only (the last layer under a sparse head).
  torch::Tensor forward_at(const torch::Tensor& x, const torch::Tensor& attention_bias,
                           const torch::Tensor& positions);

  /// Self-attention context [B,R,H] before the output projection: queries from `queries`
  /// [B,R,H], keys and values from `x` [B,S,H] (queries == x: the fused QKV product, x then
  /// possibly [T,H] rows of `layout`, and the context too).
  torch::Tensor self_attention(const torch::Tensor& queries, const torch::Tensor& x,
                               const torch::Tensor& attention_bias, const TokenLayout& layout = {});

  /// The fused q|k|v projection [.., 3H] of the rows x the attention reads (pre-LN: normed
  /// first), as self_attention computes it (distillation's relation taps).
  torch::Tensor attention_projections(const torch::Tensor& x);

  torch::nn::Linear qkv{nullptr}, attention_dense{nullptr}, intermediate_dense{nullptr},
      output_dense{nullptr};
  LayerNorm attention_norm{nullptr}, output_norm{nullptr};

 private:
  // forward (positions undefined, x in `layout`) and forward_at (padded x, identity layout).
  torch::Tensor run(const torch::Tensor& x, const torch::Tensor& attention_bias, const torch::Tensor& positions,
                    const TokenLayout& layout);

  int64_t heads_;
  config::Activation act_;
  config::NormPosition norm_;
  double hidden_dropout_, attention_dropout_;
};
TORCH_MODULE(BertLayer);

/// `rows` in `layout` ([B,S,H], or the real tokens' [T,H] when unpadded) through every
/// BertLayer of `layers`, giving [B,S,H] (zeros at the padding when unpadded); with
/// `positions` defined the last layer runs at those positions only (BertLayerImpl::forward_at),
/// giving [B,R,H]. `checkpoint`: each layer checkpointed (checkpointed_layer.h).
torch::Tensor run_bert_layers(torch::nn::ModuleList layers, torch::Tensor rows,
                              const torch::Tensor& attention_bias, const TokenLayout& layout,
                              const torch::Tensor& positions = {}, bool checkpoint = false,
                              ForwardTaps* taps = nullptr);

}  // namespace mlm::model

#include "mlm/model/modernbert/modernbert_layer.h"

#include "mlm/model/kernels/dropout.h"
#include "mlm/model/kernels/geglu.h"
#include "mlm/model/varlen_attention.h"

namespace mlm::model {

ModernBertLayerImpl::ModernBertLayerImpl(const config::ModelConfig& c, int64_t index)
    : heads_(c.num_attention_heads),
      act_(c.hidden_act),
      attention_dropout_(c.attention_probs_dropout_prob),
      mlp_dropout_(c.mlp_dropout),
      half_window_(index % c.global_attn_every_n_layers == 0 ? kNoWindow : c.local_attention / 2) {
  namespace nn = torch::nn;
  const int64_t h = c.hidden_size;
  if (index > 0) attn_norm = register_module("attn_norm", LayerNorm(h, c.layer_norm_eps, c.norm_bias));
  auto attn = add_container(*this, "attn");
  Wqkv = attn->register_module("Wqkv", nn::Linear(nn::LinearOptions(h, 3 * h).bias(c.attention_bias)));
  attn_Wo = attn->register_module("Wo", nn::Linear(nn::LinearOptions(h, h).bias(c.attention_bias)));
  mlp_norm = register_module("mlp_norm", LayerNorm(h, c.layer_norm_eps, c.norm_bias));
  auto mlp = add_container(*this, "mlp");
  Wi = mlp->register_module("Wi", nn::Linear(nn::LinearOptions(h, 2 * c.intermediate_size).bias(c.mlp_bias)));
  mlp_Wo = mlp->register_module("Wo", nn::Linear(nn::LinearOptions(c.intermediate_size, h).bias(c.mlp_bias)));
}

torch::Tensor ModernBertLayerImpl::attention(const torch::Tensor& queries, const torch::Tensor& x,
                                             const torch::Tensor& bias, const RotaryTable& query_rotary,
                                             const RotaryTable& rotary, const BandedWindow* banded,
                                             const TokenLayout& layout) {
  const bool train = is_training();
  const double p = train ? attention_dropout_ : 0.0;
  torch::Tensor context;
  if (queries.is_same(x) && layout.unpadded()) {
    // The rows as they are, where a fused variable-length kernel takes them (varlen_attention.h):
    // the segments hold padding and documents apart, the window is the kernel's own band.
    const auto fused = at::linear(x, Wqkv->weight, Wqkv->bias);
    const auto rows = qkv_rows(fused, heads_);
    if (varlen_attention_supported(rows.q, half_window_, p)) {
      if (half_window_ != kNoWindow) layout.check_tokens_contiguous();
      const auto table = rotary.at(layout.positions().unsqueeze(0));  // [1,T,D]: queries are x's rows too
      auto rotate = [&](const torch::Tensor& t) {  // [T,A,D] as [1,A,T,D] and back
        return apply_rotary(t.transpose(0, 1).unsqueeze(0), table).squeeze(0).transpose(0, 1);
      };
      context = varlen_attention(rotate(rows.q), rotate(rows.k), rows.v, layout.segments(), half_window_, p)
                    .reshape({-1, x.size(-1)});
    } else {
      context = padded_attention(qkv_heads(layout.pad(fused), heads_), bias, query_rotary, rotary, banded, p, layout);
    }
  } else {
    context = padded_attention(project_qkv(Wqkv, queries, x, heads_, layout), bias, query_rotary, rotary, banded, p,
                               layout);
  }
  // transformers applies attention_dropout a second time, to the output projection.
  return kernels::dropout(linear(attn_Wo, context), attention_dropout_, train);
}

torch::Tensor ModernBertLayerImpl::padded_attention(const QkvHeads& heads, const torch::Tensor& bias,
                                                    const RotaryTable& query_rotary, const RotaryTable& rotary,
                                                    const BandedWindow* banded, double p, const TokenLayout& layout) {
  const auto q = apply_rotary(heads.q, query_rotary);
  const auto k = apply_rotary(heads.k, rotary);
  auto context = banded ? banded_attention(q, k, heads.v, *banded, p) : biased_attention(q, k, heads.v, bias, p);
  const int64_t batch = context.size(0), rows = context.size(2);
  return layout.unpad(context.permute({0, 2, 1, 3}).reshape({batch, rows, context.size(1) * context.size(3)}));
}

torch::Tensor ModernBertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                           const RotaryTable& rotary, const BandedWindow* banded,
                                           const TokenLayout& layout) {
  const auto normed = attn_norm ? attn_norm(x) : x;
  return feed_forward(x + attention(normed, normed, attention_bias, rotary, rotary, banded, layout));
}

torch::Tensor ModernBertLayerImpl::feed_forward(const torch::Tensor& h) {
  const auto gated =
      kernels::dropout(kernels::gated_activation(linear(Wi, mlp_norm(h)), act_), mlp_dropout_, is_training());
  return h + linear(mlp_Wo, gated);
}

torch::Tensor ModernBertLayerImpl::forward_at(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                              const RotaryTable& rotary, const torch::Tensor& positions) {
  const auto normed = attn_norm ? attn_norm(x) : x;
  return feed_forward(gather_positions(x, positions) +
                      attention(gather_positions(normed, positions), normed, bias_rows_at(attention_bias, positions),
                                rotary.at(positions), rotary));
}

}  // namespace mlm::model

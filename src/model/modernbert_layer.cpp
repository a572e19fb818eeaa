#include "mlm/model/modernbert_layer.h"

namespace mlm::model {
namespace F = torch::nn::functional;

ModernBertLayerImpl::ModernBertLayerImpl(const config::ModelConfig& c, int64_t index)
    : heads_(c.num_attention_heads),
      act_(c.hidden_act),
      attention_dropout_(c.attention_probs_dropout_prob),
      mlp_dropout_(c.mlp_dropout) {
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
                                             const RotaryTable& rotary, const BandedWindow* banded) {
  const int64_t batch = x.size(0), seq = x.size(1), hidden = x.size(2);
  const int64_t rows = queries.size(1), head_dim = hidden / heads_;
  torch::Tensor q, k, v;
  if (queries.is_same(x)) {
    // [B,S,3H] -> [3,B,A,S,D]: rows of Wqkv are query, key, value, each head by head.
    auto parts = Wqkv(x).view({batch, seq, 3, heads_, head_dim}).permute({2, 0, 3, 1, 4});
    q = parts[0], k = parts[1], v = parts[2];
  } else {
    const auto& w = Wqkv->weight;
    const auto& b = Wqkv->bias;
    auto part = [&](const torch::Tensor& t, int64_t start, int64_t length) {
      return t.defined() ? t.narrow(0, start, length) : t;
    };
    q = F::linear(queries, part(w, 0, hidden), part(b, 0, hidden))
            .view({batch, rows, heads_, head_dim})
            .permute({0, 2, 1, 3});
    auto kv = F::linear(x, part(w, hidden, 2 * hidden), part(b, hidden, 2 * hidden))
                  .view({batch, seq, 2, heads_, head_dim})
                  .permute({2, 0, 3, 1, 4});
    k = kv[0], v = kv[1];
  }
  q = apply_rotary(q, query_rotary);
  k = apply_rotary(k, rotary);
  const bool train = is_training();
  const double p = train ? attention_dropout_ : 0.0;
  torch::Tensor context;
  if (banded) {
    context = banded_attention(q, k, v, *banded, p);
  } else {
    std::optional<torch::Tensor> mask;
    if (bias.defined()) mask = bias.to(q.scalar_type());
    context = at::scaled_dot_product_attention(q, k, v, mask, p, /*is_causal=*/false);
  }
  context = context.permute({0, 2, 1, 3}).reshape({batch, rows, hidden});
  // transformers applies attention_dropout a second time, to the output projection.
  return torch::dropout(attn_Wo(context), attention_dropout_, train);
}

torch::Tensor ModernBertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                           const RotaryTable& rotary, const BandedWindow* banded) {
  const auto normed = attn_norm ? attn_norm(x) : x;
  return feed_forward(x + attention(normed, normed, attention_bias, rotary, rotary, banded));
}

torch::Tensor ModernBertLayerImpl::feed_forward(const torch::Tensor& h) {
  const auto parts = Wi(mlp_norm(h)).chunk(2, -1);  // input, gate
  const auto gated = torch::dropout(activation(parts[0], act_) * parts[1], mlp_dropout_, is_training());
  return h + mlp_Wo(gated);
}

torch::Tensor ModernBertLayerImpl::forward_at(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                              const RotaryTable& rotary, const torch::Tensor& positions) {
  const auto normed = attn_norm ? attn_norm(x) : x;
  return feed_forward(gather_positions(x, positions) +
                      attention(gather_positions(normed, positions), normed, bias_rows_at(attention_bias, positions),
                                rotary.at(positions), rotary));
}

}  // namespace mlm::model

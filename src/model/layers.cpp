#include "mlm/model/layers.h"

#include <ATen/Dispatch.h>
#include <ATen/autocast_mode.h>

#include "mlm/model/kernels/attention_dropout.h"
#include "mlm/model/kernels/dropout_add_layer_norm.h"
#include "mlm/model/varlen_attention.h"

#include <algorithm>
#include <limits>

namespace mlm::model {

LayerNormImpl::LayerNormImpl(int64_t size, double eps, bool with_bias) : size_(size), eps_(eps) {
  weight = register_parameter("weight", torch::ones({size}));
  if (with_bias) bias = register_parameter("bias", torch::zeros({size}));
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  return torch::layer_norm(x.to(torch::kFloat32), {size_}, weight, bias, eps_);
}

torch::Tensor LayerNormImpl::forward_dropout_add(const torch::Tensor& x, const torch::Tensor& residual, double p,
                                                 bool training) {
  return kernels::dropout_add_layer_norm(x, residual, weight, bias, p, eps_, training);
}

torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return at::linear(x, layer->weight, layer->bias);
}

torch::Tensor activation(const torch::Tensor& x, config::Activation act) {
  switch (act) {
    case config::Activation::gelu: return torch::gelu(x);
    case config::Activation::gelu_tanh: return torch::gelu(x, "tanh");
  }
  TORCH_CHECK(false, "unknown activation");
}

torch::Tensor attention_bias_from_mask(const torch::Tensor& attention_mask) {
  TORCH_CHECK(attention_mask.dim() == 2, "attention_mask must be [B,S], got ", attention_mask.sizes());
  auto bias = torch::zeros(attention_mask.sizes(), attention_mask.options().dtype(torch::kFloat32));
  bias.masked_fill_(attention_mask.eq(0), kMaskedBias);
  return bias.view({attention_mask.size(0), 1, 1, attention_mask.size(1)});
}

torch::Tensor same_document_mask(const torch::Tensor& document_ids, const torch::Tensor& attention_mask) {
  TORCH_CHECK(document_ids.dim() == 2, "document_ids must be [B,S], got ", document_ids.sizes());
  const auto ids = padding_as_document(document_ids, attention_mask);
  return ids.unsqueeze(2).eq(ids.unsqueeze(1)).unsqueeze(1);  // [B,1,S(query),S(key)]
}

torch::Tensor padding_as_document(const torch::Tensor& document_ids, const torch::Tensor& attention_mask) {
  if (!attention_mask.defined()) return document_ids;
  TORCH_CHECK(attention_mask.sizes() == document_ids.sizes(), "attention_mask ", attention_mask.sizes(),
              " and document_ids ", document_ids.sizes(), " differ in shape");
  return document_ids.masked_fill(attention_mask.eq(0), -1);
}

torch::Tensor sliding_window_mask(int64_t seq, int64_t half_window, const torch::Device& device) {
  const auto position = torch::arange(seq, torch::TensorOptions().dtype(torch::kLong).device(device));
  return (position.unsqueeze(1) - position.unsqueeze(0)).abs().le(half_window).view({1, 1, seq, seq});
}

torch::Tensor attention_bias_from_allowed(const torch::Tensor& allowed, torch::ScalarType dtype) {
  TORCH_CHECK(allowed.scalar_type() == torch::kBool, "allowed must be a bool mask, got ", allowed.scalar_type());
  double lowest = 0;  // fp16's lowest finite (-65504) is above kMaskedBias
  AT_DISPATCH_FLOATING_TYPES_AND2(torch::kHalf, torch::kBFloat16, dtype, "attention_bias_from_allowed", [&] {
    lowest = static_cast<double>(std::numeric_limits<scalar_t>::lowest());
  });
  auto bias = torch::zeros(allowed.sizes(), allowed.options().dtype(dtype));
  return bias.masked_fill_(allowed.logical_not(), std::max(kMaskedBias, lowest));
}

QkvHeads project_qkv(const torch::nn::Linear& qkv, const torch::Tensor& queries, const torch::Tensor& x,
                     int64_t heads, const TokenLayout& layout) {
  const auto& w = qkv->weight;
  const auto& b = qkv->bias;
  const int64_t hidden = x.size(-1), head_dim = hidden / heads;
  // [B,S,3H] (the real tokens' [T,3H] scattered back) -> [3,B,A,S,D].
  if (queries.is_same(x)) return qkv_heads(layout.pad(at::linear(x, w, b)), heads);
  TORCH_CHECK(!layout.unpadded(), "project_qkv: queries apart from x take padded [B,S,H] inputs");
  const int64_t batch = x.size(0), seq = x.size(1), rows = queries.size(1);
  // Rows 0..H of the fused matrix are the query, H..3H key and value.
  auto part = [](const torch::Tensor& t, int64_t start, int64_t length) {
    return t.defined() ? t.narrow(0, start, length) : t;
  };
  auto q = at::linear(queries, part(w, 0, hidden), part(b, 0, hidden))
               .view({batch, rows, heads, head_dim})
               .permute({0, 2, 1, 3});
  const auto kv = at::linear(x, part(w, hidden, 2 * hidden), part(b, hidden, 2 * hidden))
                      .view({batch, seq, 2, heads, head_dim})
                      .permute({2, 0, 3, 1, 4})
                      .unbind(0);
  return {q, kv[0], kv[1]};
}

QkvHeads qkv_heads(const torch::Tensor& fused, int64_t heads) {
  TORCH_CHECK(fused.dim() == 3 && fused.size(2) % (3 * heads) == 0, "qkv_heads: [B,S,3H] with H divisible by ",
              heads, " heads, got ", fused.sizes());
  // unbind, not three selects: its backward stacks the three gradients in one write, where each
  // select's zero-fills a whole [3,B,A,S,D] buffer, copies its part in and the three are added.
  const auto parts = fused.view({fused.size(0), fused.size(1), 3, heads, fused.size(2) / (3 * heads)})
                         .permute({2, 0, 3, 1, 4})
                         .unbind(0);
  return {parts[0], parts[1], parts[2]};
}

QkvHeads qkv_rows(const torch::Tensor& fused, int64_t heads) {
  TORCH_CHECK(fused.dim() == 2 && fused.size(1) % (3 * heads) == 0, "qkv_rows: [T,3H] with H divisible by ", heads,
              " heads, got ", fused.sizes());
  const auto parts = fused.view({fused.size(0), 3, heads, fused.size(1) / (3 * heads)}).unbind(1);
  return {parts[0], parts[1], parts[2]};
}

torch::Tensor self_attention(const torch::nn::Linear& qkv, const torch::Tensor& x, int64_t heads,
                             const torch::Tensor& bias, const TokenLayout& layout, double dropout) {
  const int64_t hidden = x.size(-1);
  const auto fused = at::linear(x, qkv->weight, qkv->bias);
  if (layout.unpadded()) {
    const auto rows = qkv_rows(fused, heads);
    if (varlen_attention_supported(rows.q, kNoWindow, dropout)) {
      return varlen_attention(rows.q, rows.k, rows.v, layout.segments(), kNoWindow, dropout).reshape({-1, hidden});
    }
  }
  const auto h = qkv_heads(layout.pad(fused), heads);
  // The fused kernel (flash / memory-efficient / math, chosen by LibTorch for the device);
  // padding (and documents kept apart) enters as the additive bias.
  const auto context = biased_attention(h.q, h.k, h.v, bias, dropout);  // [B,A,S,D]
  return layout.unpad(context.permute({0, 2, 1, 3}).reshape({context.size(0), context.size(2), hidden}));
}

torch::Tensor biased_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& bias, double dropout) {
  return kernels::attention_with_dropout(q, k, v, bias, dropout);
}

torch::Tensor gather_positions(const torch::Tensor& x, const torch::Tensor& positions) {
  return x.gather(1, positions.unsqueeze(-1).expand({-1, -1, x.size(2)}));
}

torch::Tensor bias_rows_at(const torch::Tensor& bias, const torch::Tensor& positions) {
  if (!bias.defined() || bias.size(2) == 1) return bias;
  const int64_t batch = positions.size(0), rows = positions.size(1);
  const auto index = positions.view({batch, 1, rows, 1}).expand({-1, bias.size(1), -1, bias.size(3)});
  return bias.expand({batch, -1, -1, -1}).gather(2, index);  // a [1,1,S,S] bias serves every row
}

torch::ScalarType compute_dtype(const torch::Device& device) {
  return at::autocast::is_autocast_enabled(device.type()) ? at::autocast::get_autocast_dtype(device.type())
                                                          : torch::kFloat32;
}

std::shared_ptr<torch::nn::Module> add_container(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

}  // namespace mlm::model

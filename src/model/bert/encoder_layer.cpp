#include "mlm/model/bert/encoder_layer.h"

#include "mlm/model/checkpointed_layer.h"

#include <torch/version.h>

#include <cmath>

#include "mlm/model/kernels/dropout.h"

namespace mlm::model {

BertLayerImpl::BertLayerImpl(const config::ModelConfig& c)
    : heads_(c.num_attention_heads),
      act_(c.hidden_act),
      norm_(c.norm),
      hidden_dropout_(c.hidden_dropout_prob),
      attention_dropout_(c.attention_probs_dropout_prob) {
  namespace nn = torch::nn;
  TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "hidden_size ", c.hidden_size,
              " is not divisible by num_attention_heads ", c.num_attention_heads);
  const int64_t h = c.hidden_size;
  auto attention = add_container(*this, "attention");
  qkv = add_container(*attention, "self")->register_module("qkv", nn::Linear(h, 3 * h));
  auto attention_output = add_container(*attention, "output");
  attention_dense = attention_output->register_module("dense", nn::Linear(h, h));
  attention_norm = attention_output->register_module("LayerNorm", LayerNorm(h, c.layer_norm_eps));
  intermediate_dense = add_container(*this, "intermediate")
                           ->register_module("dense", nn::Linear(h, c.intermediate_size));
  auto output = add_container(*this, "output");
  output_dense = output->register_module("dense", nn::Linear(c.intermediate_size, h));
  output_norm = output->register_module("LayerNorm", LayerNorm(h, c.layer_norm_eps));
}

torch::Tensor BertLayerImpl::self_attention(const torch::Tensor& queries, const torch::Tensor& x,
                                            const torch::Tensor& attention_bias, const TokenLayout& layout) {
  const double p = is_training() ? attention_dropout_ : 0.0;
  // Every position's queries: the rows attend as they are where they can (layers.h).
  if (queries.is_same(x)) return model::self_attention(qkv, x, heads_, attention_bias, layout, p);
  const auto heads = project_qkv(qkv, queries, x, heads_, layout);
  // The fused kernel (flash / memory-efficient / math, chosen by LibTorch for the device);
  // padding (and documents kept apart) enters as the additive bias.
  const auto context = biased_attention(heads.q, heads.k, heads.v, attention_bias, p);  // [B,A,R,D]
  const int64_t batch = context.size(0), rows = context.size(2);
  return layout.unpad(context.permute({0, 2, 1, 3}).reshape({batch, rows, x.size(-1)}));
}

torch::Tensor BertLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                     const TokenLayout& layout) {
  return run(x, attention_bias, torch::Tensor(), layout);
}

torch::Tensor BertLayerImpl::forward_at(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                        const torch::Tensor& positions) {
  return run(x, attention_bias, positions, TokenLayout());
}

torch::Tensor BertLayerImpl::run(const torch::Tensor& x, const torch::Tensor& attention_bias,
                                 const torch::Tensor& positions, const TokenLayout& layout) {
  // Undefined positions = every position: `at` returns its argument itself, so
  // self_attention sees queries == x and takes the fused QKV product.
  auto at = [&](const torch::Tensor& t) {
    return positions.defined() ? gather_positions(t, positions) : t;
  };
  const bool train = is_training();
  const auto x_at = at(x);
  const auto bias = positions.defined() ? bias_rows_at(attention_bias, positions) : attention_bias;
  if (norm_ == config::NormPosition::post) {
    const auto a = linear(attention_dense, self_attention(x_at, x, bias, layout));
    const auto h = attention_norm->forward_dropout_add(a, x_at, hidden_dropout_, train);
    const auto f = linear(output_dense, activation(linear(intermediate_dense, h), act_));
    return output_norm->forward_dropout_add(f, h, hidden_dropout_, train);
  }
  const auto normed = attention_norm(x);
  auto a = linear(attention_dense, self_attention(at(normed), normed, bias, layout));
  auto h = x_at + kernels::dropout(a, hidden_dropout_, train);
  auto f = linear(output_dense, activation(linear(intermediate_dense, output_norm(h)), act_));
  return h + kernels::dropout(f, hidden_dropout_, train);
}

torch::Tensor BertLayerImpl::attention_projections(const torch::Tensor& x) {
  return linear(qkv, norm_ == config::NormPosition::post ? x : attention_norm(x));
}

torch::Tensor run_bert_layers(torch::nn::ModuleList layers, torch::Tensor rows,
                              const torch::Tensor& attention_bias, const TokenLayout& layout,
                              const torch::Tensor& positions, bool checkpoint, ForwardTaps* taps) {
  TORCH_CHECK(!layers->is_empty(), "an encoder needs at least one layer");
  const auto last = layers->size() - 1;
  for (size_t i = 0; i <= last; ++i) {
    auto* layer = layers[i]->as<BertLayer>();
    if (taps && taps->qkv_layer == static_cast<int64_t>(i)) taps->qkv = layout.pad(layer->attention_projections(rows));
    // By value: a checkpointed layer runs again in the backward pass, after this returns.
    std::function<torch::Tensor(const torch::Tensor&)> run_layer;
    if (i == last && positions.defined()) {
      // The sparse last layer gathers its queries by position, from the padded batch.
      run_layer = [layer, attention_bias, layout, positions](const torch::Tensor& x) {
        return layer->forward_at(layout.pad(x), attention_bias, positions);
      };
    } else {
      run_layer = [layer, attention_bias, layout](const torch::Tensor& x) {
        return layer->forward(x, attention_bias, layout);
      };
    }
    rows = checkpoint ? checkpointed_layer(run_layer, rows) : run_layer(rows);
  }
  return positions.defined() ? rows : layout.pad(rows);
}

}  // namespace mlm::model

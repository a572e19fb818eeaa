// DeBERTa's relative positions and its layer: disentangled self-attention as transformers'
// DisentangledSelfAttention computes it (the same operations in the same order, so that fp32
// agrees to rounding), then BERT's post-LN output and feed-forward blocks.
#include <cmath>

#include "mlm/model/deberta/deberta.h"
#include "mlm/model/kernels/dropout.h"
#include "mlm/model/kernels/relative_attention.h"

namespace mlm::model {
namespace nn = torch::nn;

namespace {

// transformers' make_log_bucket_position: exact within +-bucket_size / 2, log-spaced beyond,
// in fp32 as there.
torch::Tensor log_bucket_position(const torch::Tensor& relative_pos, int64_t bucket_size, int64_t max_position) {
  const auto sign = torch::sign(relative_pos);
  const int64_t mid = bucket_size / 2;
  const auto inside = relative_pos.lt(mid).logical_and(relative_pos.gt(-mid));
  const auto abs_pos = torch::where(inside, torch::full({}, mid - 1, relative_pos.options()), relative_pos.abs());
  const auto base = torch::log(torch::tensor(static_cast<float>(static_cast<double>(max_position - 1) / mid),
                                             torch::TensorOptions().device(relative_pos.device())));
  const auto log_pos =
      torch::ceil(torch::log(abs_pos.to(torch::kFloat32) / static_cast<double>(mid)) / base * static_cast<double>(mid - 1)) +
      static_cast<double>(mid);
  return torch::where(abs_pos.le(mid), relative_pos.to(torch::kFloat32), log_pos * sign);
}

// [B,S,H] -> [B,A,S,D]; [N,H] -> [A,N,D].
torch::Tensor split_heads(const torch::Tensor& x, int64_t heads) {
  if (x.dim() == 2) return x.view({x.size(0), heads, -1}).permute({1, 0, 2});
  return x.view({x.size(0), x.size(1), heads, -1}).permute({0, 2, 1, 3});
}

}  // namespace

torch::Tensor deberta_relative_positions(int64_t seq, int64_t buckets, int64_t max_position,
                                         const torch::Device& device) {
  const auto ids = torch::arange(seq, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto relative = ids.unsqueeze(1) - ids.unsqueeze(0);
  if (buckets > 0 && max_position > 0) relative = log_bucket_position(relative, buckets, max_position);
  return relative.to(torch::kLong);
}

RelativeWindow deberta_relative_window(int64_t seq, int64_t buckets, int64_t max_position, int64_t span,
                                       const torch::Device& device) {
  // On the CPU: [S,S] is small, and first / width are needed on the host.
  const auto rows =
      torch::clamp(deberta_relative_positions(seq, buckets, max_position, torch::kCPU) + span, 0, 2 * span - 1);
  RelativeWindow window;
  window.first = rows.min().item<int64_t>();
  window.width = rows.max().item<int64_t>() - window.first + 1;
  window.index = (rows - window.first).to(torch::kInt32).to(device);
  return window;
}

DebertaV2LayerImpl::DebertaV2LayerImpl(const config::ModelConfig& c)
    : heads_(c.num_attention_heads),
      c2p_(config::has_pos_att(c, "c2p")),
      p2c_(config::has_pos_att(c, "p2c")),
      share_att_key_(c.share_att_key),
      relative_attention_(c.relative_attention),
      act_(c.hidden_act),
      hidden_dropout_(c.hidden_dropout_prob),
      attention_dropout_(c.attention_probs_dropout_prob) {
  TORCH_CHECK(c.hidden_size % c.num_attention_heads == 0, "hidden_size ", c.hidden_size,
              " is not divisible by num_attention_heads ", c.num_attention_heads);
  scale_factor_ = 1.0 + (c2p_ ? 1 : 0) + (p2c_ ? 1 : 0);
  const int64_t h = c.hidden_size;
  auto attention = add_container(*this, "attention");
  auto self = add_container(*attention, "self");
  query_proj = self->register_module("query_proj", nn::Linear(h, h));
  key_proj = self->register_module("key_proj", nn::Linear(h, h));
  value_proj = self->register_module("value_proj", nn::Linear(h, h));
  if (relative_attention_ && !share_att_key_) {
    if (c2p_) pos_key_proj = self->register_module("pos_key_proj", nn::Linear(h, h));
    if (p2c_) pos_query_proj = self->register_module("pos_query_proj", nn::Linear(h, h));
  }
  auto attention_output = add_container(*attention, "output");
  attention_dense = attention_output->register_module("dense", nn::Linear(h, h));
  attention_norm = attention_output->register_module("LayerNorm", LayerNorm(h, c.layer_norm_eps));
  intermediate_dense =
      add_container(*this, "intermediate")->register_module("dense", nn::Linear(h, c.intermediate_size));
  auto output = add_container(*this, "output");
  output_dense = output->register_module("dense", nn::Linear(c.intermediate_size, h));
  output_norm = output->register_module("LayerNorm", LayerNorm(h, c.layer_norm_eps));
}

torch::Tensor DebertaV2LayerImpl::self_attention(const torch::Tensor& x, const torch::Tensor& bias,
                                                 const torch::Tensor& rel_rows, const torch::Tensor& rel_index) {
  const bool train = is_training();
  const auto q = split_heads(linear(query_proj, x), heads_);  // [B,A,S,D]
  const auto k = split_heads(linear(key_proj, x), heads_);
  const auto v = split_heads(linear(value_proj, x), heads_);
  const int64_t batch = x.size(0), seq = x.size(1), head_dim = q.size(-1);
  // transformers: every term divided by sqrt(d * scale_factor), an fp32 tensor.
  const double scale = std::sqrt(static_cast<float>(head_dim) * static_cast<float>(scale_factor_));
  const auto content = torch::matmul(q, k.transpose(-1, -2));  // [B,A,S,S]
  torch::Tensor c2p, p2c;  // [B,A,S,W]: each query (c2p) or key (p2c) against the window's rows
  if (relative_attention_) {
    const auto rel = kernels::dropout(rel_rows, hidden_dropout_, train);
    const int64_t width = rel.size(0);
    // One product per head over the whole batch: [A, B*S, D] x [A, D, W] (matmul would copy the
    // head's rows B times to broadcast them), viewed as [B,A,S,W].
    const auto against = [&](const torch::Tensor& states, const nn::Linear& projection) {
      const auto rows = split_heads(linear(projection, rel), heads_);  // [A,W,D]
      const auto by_head = states.permute({1, 0, 2, 3}).reshape({heads_, batch * seq, head_dim});
      return torch::bmm(by_head, rows.transpose(-1, -2)).view({heads_, batch, seq, width}).permute({1, 0, 2, 3});
    };
    if (c2p_) c2p = against(q, share_att_key_ ? key_proj : pos_key_proj);
    if (p2c_) p2c = against(k, share_att_key_ ? query_proj : pos_query_proj);
  }
  const auto softmax_dropout =
      fused_scores ? kernels::relative_softmax_dropout : kernels::relative_softmax_dropout_reference;
  const auto probs = softmax_dropout(content, c2p, p2c, rel_index, bias, 1.0 / scale, train ? attention_dropout_ : 0.0);
  const auto context = torch::matmul(probs.to(v.scalar_type()), v);  // [B,A,S,D]
  return context.permute({0, 2, 1, 3}).reshape({batch, seq, x.size(-1)});
}

torch::Tensor DebertaV2LayerImpl::forward(const torch::Tensor& x, const torch::Tensor& bias,
                                          const torch::Tensor& rel_rows, const torch::Tensor& rel_index) {
  const bool train = is_training();
  const auto a = linear(attention_dense, self_attention(x, bias, rel_rows, rel_index));
  const auto h = attention_norm->forward_dropout_add(a, x, hidden_dropout_, train);
  const auto f = linear(output_dense, activation(linear(intermediate_dense, h), act_));
  return output_norm->forward_dropout_add(f, h, hidden_dropout_, train);
}

}  // namespace mlm::model

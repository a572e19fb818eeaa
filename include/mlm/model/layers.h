#pragma once
// Small building blocks shared by the BERT modules: a LayerNorm that is safe under CPU bf16
// autocast, the activation, and the additive attention biases: for padded keys, and for
// keeping the documents of a packed sequence apart.
#include <torch/torch.h>

#include "mlm/config/enums.h"
#include "mlm/model/token_layout.h"

namespace mlm::model {

/// LayerNorm over the last dimension with fp32 weight and bias (no bias: with_bias false, as
/// ModernBERT's). The input is cast to fp32 first, so the normalisation runs in fp32 under bf16
/// autocast on every device (as CUDA's autocast policy does for layer_norm). The output is fp32
/// (the next linear casts it again).
struct LayerNormImpl : torch::nn::Module {
  LayerNormImpl(int64_t size, double eps, bool with_bias = true);
  torch::Tensor forward(const torch::Tensor& x);
  /// forward(dropout(x, p) + residual) in one fused pass (BERT's post-LN residual step).
  torch::Tensor forward_dropout_add(const torch::Tensor& x, const torch::Tensor& residual, double p, bool training);

  torch::Tensor weight, bias;
  int64_t size_;
  double eps_;
};
TORCH_MODULE(LayerNorm);

/// x W^T + b through at::linear: one product with the bias fused in (addmm), and under
/// autocast the bias cast with the weight. The C++ frontend's Linear::forward instead adds a
/// 3-d input's bias in a second pass, fp32 bias into a bf16 product, and that pass and its
/// backward cost as much as a third of the product itself.
torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x);

/// gelu: exact erf form (Hugging Face "gelu"); gelu_tanh: the tanh approximation
/// (Hugging Face "gelu_new" / "gelu_pytorch_tanh").
torch::Tensor activation(const torch::Tensor& x, config::Activation act);

/// The additive bias of a key a query may not attend to. Finite on purpose: a fully masked
/// row then gives uniform weights instead of NaN, and -1e30 is representable in bf16 (the
/// autocast dtype); exp(-1e30 - max) is exactly 0, so the allowed keys are unaffected.
inline constexpr double kMaskedBias = -1e30;

/// [B,1,1,S] fp32 additive bias: 0 for real keys, kMaskedBias for padding (attention_mask == 0).
torch::Tensor attention_bias_from_mask(const torch::Tensor& attention_mask);

/// [B,1,S,S] bool: true where query and key are in the same document of their row.
/// document_ids [B,S] >= 0 (equal = same document, e.g. MaskedBatch::document_ids); attention_mask
/// [B,S] (undefined = no padding): padding keys are never seen by real queries, while a
/// padding query sees the padding keys, so every query sees at least itself and no row is
/// empty, whatever else is ANDed in (a sliding window: every query is inside its own).
torch::Tensor same_document_mask(const torch::Tensor& document_ids, const torch::Tensor& attention_mask);

/// document_ids with the padding of attention_mask (undefined: none) as document -1, apart
/// from every real one: the ids same_document_mask compares.
torch::Tensor padding_as_document(const torch::Tensor& document_ids, const torch::Tensor& attention_mask);

/// [1,1,S,S] bool: true where |query - key| <= half_window (a bidirectional sliding window of
/// 2 * half_window + 1 tokens, as transformers' ModernBERT masks its local layers).
torch::Tensor sliding_window_mask(int64_t seq, int64_t half_window, const torch::Device& device);

/// Additive bias from a boolean mask (true = may attend): 0 there, kMaskedBias elsewhere (or
/// the dtype's lowest finite value if that is higher, fp16), in `dtype`: the dtype the
/// attention runs in, so the layers need not cast it again.
torch::Tensor attention_bias_from_allowed(const torch::Tensor& allowed, torch::ScalarType dtype);

/// Query, key and value heads [B,A,R,D], [B,A,S,D], [B,A,S,D] from one fused projection whose
/// rows are query, key, value (bias optional): the queries from `queries` [B,R,H], keys and
/// values from `x` [B,S,H]; one product when queries is x itself, which may then be the real
/// tokens' rows [T,H] of an unpadded `layout` (projected first, scattered back after).
struct QkvHeads {
  torch::Tensor q, k, v;
};
QkvHeads project_qkv(const torch::nn::Linear& qkv, const torch::Tensor& queries, const torch::Tensor& x,
                     int64_t heads, const TokenLayout& layout = {});

/// The heads of a fused projection's output, rows query, key, value: [B,S,3H] -> [B,A,S,D]
/// each (qkv_heads), or rows [T,3H] -> [T,A,D] each, views of it (qkv_rows: the layout of
/// variable-length attention).
QkvHeads qkv_heads(const torch::Tensor& fused, int64_t heads);
QkvHeads qkv_rows(const torch::Tensor& fused, int64_t heads);

/// Self-attention of x through the fused projection `qkv`, before the output projection:
/// [..., H] laid out as x ([B,S,H], or the [T,H] rows of an unpadded `layout`). On CUDA, rows
/// whose dtype and head width a fused variable-length kernel takes attend within the layout's
/// segments, padding and documents included (varlen_attention.h; `bias` is not read).
/// Otherwise the heads are scattered back to [B,A,S,D] and attend under `bias`
/// (biased_attention): the CPU's path, and the padded batch's.
torch::Tensor self_attention(const torch::nn::Linear& qkv, const torch::Tensor& x, int64_t heads,
                             const torch::Tensor& bias, const TokenLayout& layout, double dropout);

/// Attention of [B,A,R,D] heads under an additive bias (undefined: none) with dropout on the
/// probabilities: SDPA, or on the CPU with dropout the fused kernel of
/// kernels/attention_dropout.h (SDPA would take its unfused math path): [B,A,R,D].
torch::Tensor biased_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const torch::Tensor& bias, double dropout);

/// x [B,S,H] at positions [B,R] (indices into S per row): [B,R,H].
torch::Tensor gather_positions(const torch::Tensor& x, const torch::Tensor& positions);

/// The bias rows of the queries at positions [B,R]: [B or 1,1,S,S] -> [B,1,R,S]. A key-only
/// bias ([B,1,1,S], or none) is the same for every query and returned as it is.
torch::Tensor bias_rows_at(const torch::Tensor& bias, const torch::Tensor& positions);

/// The dtype matrix products run in on `device` now: the autocast dtype when autocast is on.
torch::ScalarType compute_dtype(const torch::Device& device);

/// An empty module, only to give parameters their Hugging Face dotted path
/// ("attention" -> "output" -> "dense"). Returns the registered child.
std::shared_ptr<torch::nn::Module> add_container(torch::nn::Module& parent, const std::string& name);

}  // namespace mlm::model

#include "mlm/model/varlen_attention.h"

#if MLM_WITH_CUDA
#include <ATen/native/transformers/cuda/sdp_utils.h>
#endif

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace mlm::model {
namespace {

void check_rows(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                const VarlenSegments& segments) {
  TORCH_CHECK(q.dim() == 3 && k.sizes() == q.sizes() && v.sizes() == q.sizes(),
              "varlen attention: q, k, v [T,A,D] of one shape, got ", q.sizes(), k.sizes(), v.sizes());
  TORCH_CHECK(segments.cu_seqlens.defined() && segments.cu_seqlens.dim() == 1 && segments.cu_seqlens.numel() >= 2 &&
                  segments.cu_seqlens.scalar_type() == torch::kInt32,
              "varlen attention: cu_seqlens must be int32 [N+1], N >= 1");
}

#if MLM_WITH_CUDA
// [T,A,D] as the [1,A,T,D] heads SDPA's checks read (a view: nothing is copied).
sdp::sdp_params probe(const torch::Tensor& q, double p) {
  const auto heads = q.unsqueeze(0).transpose(1, 2);
  return {heads, heads, heads, std::nullopt, p, /*is_causal=*/false, /*enable_gqa=*/false};
}

bool half_precision(const torch::Tensor& q) {
  return q.scalar_type() == torch::kHalf || q.scalar_type() == torch::kBFloat16;
}

bool flash_takes(const torch::Tensor& q, double p) {
  return half_precision(q) && sdp::can_use_flash_attention(probe(q, p), /*debug=*/false);
}
#endif

}  // namespace

torch::Tensor varlen_attention_reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                         const VarlenSegments& segments, int64_t half_window, double p) {
  check_rows(q, k, v, segments);
  const auto bounds = segments.cu_seqlens.to(torch::kCPU, torch::kLong);
  const auto* b = bounds.data_ptr<int64_t>();
  const int64_t count = bounds.numel() - 1, total = q.size(0);
  TORCH_CHECK(b[0] == 0 && b[count] == total, "varlen attention: cu_seqlens must run from 0 to the ", total,
              " rows, got ", b[0], " .. ", b[count]);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(2)));
  std::vector<torch::Tensor> outputs;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t length = b[i + 1] - b[i];
    TORCH_CHECK(length >= 0 && length <= segments.max_seqlen, "varlen attention: segment ", i, " has ", length,
                " rows, max_seqlen is ", segments.max_seqlen);
    if (length == 0) continue;
    // [L,A,D] -> [A,L,D]: the segment's heads; scores [A,L,L] in fp32.
    auto heads = [&](const torch::Tensor& t) { return t.narrow(0, b[i], length).transpose(0, 1).to(torch::kFloat32); };
    auto scores = torch::matmul(heads(q), heads(k).transpose(1, 2)) * scale;
    if (half_window >= 0) {
      const auto at = torch::arange(length, torch::TensorOptions().dtype(torch::kLong).device(q.device()));
      const auto outside = (at.unsqueeze(1) - at.unsqueeze(0)).abs().gt(half_window);  // the band's complement
      scores = scores.masked_fill(outside, -std::numeric_limits<float>::infinity());
    }
    auto probs = torch::dropout(torch::softmax(scores, -1), p, /*train=*/p > 0);
    outputs.push_back(torch::matmul(probs, heads(v)).transpose(0, 1));  // [L,A,D]
  }
  return torch::cat(outputs).to(q.scalar_type());
}

bool varlen_attention_supported(const torch::Tensor& q, int64_t half_window, double p) {
#if MLM_WITH_CUDA
  // Head widths of a multiple of 8: what both kernels take without SDPA's padding of the heads.
  if (!q.is_cuda() || q.dim() != 3 || q.size(0) == 0 || q.size(2) % 8 != 0) return false;
  if (flash_takes(q, p)) return true;
  // The memory-efficient kernel's window is causal only: no symmetric band.
  return half_window < 0 && sdp::can_use_mem_efficient_attention(probe(q, p), /*debug=*/false);
#else
  (void)q, (void)half_window, (void)p;
  return false;
#endif
}

torch::Tensor varlen_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const VarlenSegments& segments, int64_t half_window, double p) {
  check_rows(q, k, v, segments);
  TORCH_CHECK(varlen_attention_supported(q, half_window, p), "varlen attention: no fused CUDA kernel takes ",
              q.scalar_type(), " heads of ", q.size(-1), " on ", q.device(),
              half_window >= 0 ? " with a sliding window" : "", " (check varlen_attention_supported first)");
  const auto& cu = segments.cu_seqlens;
  const int64_t max = segments.max_seqlen;
#if MLM_WITH_CUDA
  if (flash_takes(q, p)) {
    std::optional<int64_t> left, right;  // none: unbounded
    if (half_window >= 0) left = right = half_window;
    return std::get<0>(at::_flash_attention_forward(q, k, v, cu, cu, max, max, p, /*is_causal=*/false,
                                                    /*return_debug_mask=*/false, /*scale=*/std::nullopt, left,
                                                    right));
  }
#endif
  // [1,T,A,D]: the memory-efficient kernel's batch of one, its segments from cu_seqlens. The
  // log-sum-exp is what its backward needs; max_seqlen goes in for keys too, as the backward
  // reads it back.
  const bool grad = torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  const auto out = at::_efficient_attention_forward(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), std::nullopt, cu,
                                                    cu, max, max, p, /*custom_mask_type=*/0,
                                                    /*compute_log_sumexp=*/grad);
  return std::get<0>(out).squeeze(0);
}

}  // namespace mlm::model

#pragma once
// Variable-length attention: the rows of an unpadded batch (token_layout.h) attend as they
// are, q, k, v [T,A,D], each row only to the rows of its own segment, segment i being rows
// cu_seqlens[i] .. cu_seqlens[i+1]-1 (a sequence of the batch, or a document of one when
// documents are kept apart), optionally within a sliding window of half_window rows either
// side (ModernBERT's local layers). No padding is computed and no [B,S,S] mask is built.
//
// varlen_attention_reference() says what that means in plain ATen, one segment at a time: it
// is the CPU's reference (tests compare it with the padded path under a key mask and with the
// banded window), not a fast path. varlen_attention() is the same on CUDA through ATen's fused
// kernels with cumulative sequence lengths: FlashAttention-2 (at::_flash_attention_forward,
// fp16 / bf16, the window as window_size_left = window_size_right = half_window) or the
// memory-efficient kernel (at::_efficient_attention_forward, fp32 too, no window). Both take
// the attention dropout themselves and have ATen's autograd formulas for their backward.
#include <torch/torch.h>

#include <cstdint>

namespace mlm::model {

/// Segments of rows for variable-length attention.
struct VarlenSegments {
  torch::Tensor cu_seqlens;  // [N+1] int32 on the rows' device: 0, then each segment's end
  int64_t max_seqlen = 0;    // an upper bound of every segment's length (the kernels size
                             //   their grids by it, so it need not be exact)
};

/// No sliding window: every row of a segment sees every other.
inline constexpr int64_t kNoWindow = -1;

/// Attention of q, k, v [T,A,D] within each segment (and |query - key| <= half_window rows
/// when half_window >= 0), scaled by 1/sqrt(D), with dropout p on the probabilities: [T,A,D]
/// in q's dtype. Rows after the last segment's end are zero. Plain ATen: reads cu_seqlens on
/// the host.
torch::Tensor varlen_attention_reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                         const VarlenSegments& segments, int64_t half_window, double p);

/// Whether varlen_attention() takes these rows: a CUDA build, q on a CUDA device, heads a
/// multiple of 8 wide, and a fused kernel that accepts q's dtype with this window and dropout
/// (FlashAttention for fp16 / bf16 on sm80 and later; else the memory-efficient kernel, which
/// has no symmetric window), as ATen's own SDPA checks decide (which also honour the
/// torch.backends.cuda.enable_*_sdp switches).
bool varlen_attention_supported(const torch::Tensor& q, int64_t half_window, double p);

/// varlen_attention_reference's result on CUDA, through the fused kernel the check above
/// found: [T,A,D] in q's dtype, differentiable in q, k and v. Never reads the device.
torch::Tensor varlen_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const VarlenSegments& segments, int64_t half_window, double p);

}  // namespace mlm::model

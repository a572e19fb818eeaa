#pragma once
// Sliding-window attention computed block by block: a ModernBERT local layer's query sees only
// the keys within half_window positions, so the sequence is cut into blocks of 2 * half_window
// queries and each block attends to its 4 * half_window surrounding keys, not to all S. The
// cost of a local layer then grows with S instead of S^2 (a quarter of the masked full product
// at S = 1024 and a window of 128, a thirty-second at S = 8192). The keys the mask allows are
// exactly the full path's (window, padding, documents); the kernel is the same SDPA call.
#include <torch/torch.h>

namespace mlm::model {

struct BandedWindow {
  int64_t half_window = 0, block = 0, seq = 0;  // block = 2 * half_window queries
  torch::Tensor bias;  // [B * blocks, 1, block, block + 2 * half_window], additive
};

/// Blocks pay off once the sequence holds more than two of them (otherwise the masked full
/// product is as cheap and one call).
inline bool banded_window_pays(int64_t seq, int64_t half_window) { return seq > 4 * half_window; }

/// The block-local additive bias for `batch` rows of `seq` tokens: |q - k| <= half_window,
/// keys inside the sequence, and, when `ids` [B,S] is defined, the same id (a document, with
/// padding as id -1: see same_document_mask); in `dtype`.
BandedWindow banded_window(int64_t batch, int64_t seq, int64_t half_window, const torch::Tensor& ids,
                           const torch::Device& device, torch::ScalarType dtype);

/// Attention of q, k, v [B,A,S,D] (S = window.seq) under the window: [B,A,S,D].
torch::Tensor banded_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const BandedWindow& window, double dropout);

}  // namespace mlm::model

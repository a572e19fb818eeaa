#pragma once
// Rotary position embeddings as `transformers` computes them for ModernBERT ("default" rope):
// inverse frequencies theta^(-2i/D), the angle table in fp32, and the rotation applied in fp32
// to queries and keys, cast back to their dtype. Attention scores then depend only on the
// distance between query and key, so packed documents need no position reset.
#include <torch/torch.h>

namespace mlm::model {

struct RotaryTable {
  torch::Tensor cos, sin;  // [S,D] fp32, rows = positions 0..S-1 (or [B,R,D] from at())

  /// The table for positions 0..seq-1 of heads `head_dim` wide (even) with base `theta`.
  static RotaryTable build(int64_t seq, int64_t head_dim, double theta, const torch::Device& device);
  /// The rows of the positions [B,R]: a [B,R,D] table.
  RotaryTable at(const torch::Tensor& positions) const;
};

/// x [B,A,S,D] rotated by the table ([S,D] or [B,S,D]): x cos + rotate_half(x) sin in fp32
/// (kernels::rotate_by_table: one pass each way on the CPU), contiguous, in x's dtype.
torch::Tensor apply_rotary(const torch::Tensor& x, const RotaryTable& table);

}  // namespace mlm::model

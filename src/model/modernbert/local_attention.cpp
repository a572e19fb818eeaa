#include "mlm/model/modernbert/local_attention.h"

#include "mlm/model/layers.h"

namespace mlm::model {
namespace {

// [B, ..., S, D] along S: left zeros, the rows, right zeros.
torch::Tensor pad_rows(const torch::Tensor& x, int64_t left, int64_t right) {
  return torch::constant_pad_nd(x, {0, 0, left, right});
}

}  // namespace

BandedWindow banded_window(int64_t batch, int64_t seq, int64_t half_window, const torch::Tensor& ids,
                           const torch::Device& device, torch::ScalarType dtype) {
  BandedWindow w;
  w.half_window = half_window;
  w.block = 2 * half_window;
  w.seq = seq;
  const int64_t blocks = (seq + w.block - 1) / w.block, keys = w.block + 2 * half_window;
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device);
  // Query r of block i is position i*block + r; key j of its window is i*block - half + j.
  const auto starts = torch::arange(blocks, longs).mul(w.block).view({blocks, 1, 1});
  const auto query = starts + torch::arange(w.block, longs).view({1, w.block, 1});
  const auto key = starts - half_window + torch::arange(keys, longs).view({1, 1, keys});
  auto allowed = (query - key).abs().le(half_window).logical_and(key.ge(0)).logical_and(key.lt(seq));
  allowed = allowed.unsqueeze(0);  // [1, blocks, block, keys]
  if (ids.defined()) {
    // Positions outside the sequence get an id no token has; the window already excludes them.
    const auto padded = torch::constant_pad_nd(ids, {half_window, blocks * w.block - seq + half_window}, -2);
    const auto key_ids = padded.unfold(1, keys, w.block);                       // [B, blocks, keys]
    const auto query_ids = key_ids.narrow(2, half_window, w.block);            // [B, blocks, block]
    allowed = allowed.logical_and(query_ids.unsqueeze(3).eq(key_ids.unsqueeze(2)));
  }
  allowed = allowed.expand({batch, blocks, w.block, keys}).reshape({batch * blocks, 1, w.block, keys});
  w.bias = attention_bias_from_allowed(allowed, dtype);
  return w;
}

torch::Tensor banded_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               const BandedWindow& w, double dropout) {
  const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dim = q.size(3);
  TORCH_CHECK(seq == w.seq, "banded attention built for ", w.seq, " positions, got ", seq);
  const int64_t blocks = (seq + w.block - 1) / w.block, keys = w.block + 2 * w.half_window;
  const int64_t tail = blocks * w.block - seq;
  // [B,A,S,D] -> [B*blocks, A, rows, D]: block-major, heads inside.
  auto per_block = [&](const torch::Tensor& t, int64_t rows) {
    return t.permute({0, 2, 1, 3, 4}).reshape({batch * blocks, heads, rows, dim});
  };
  const auto queries = per_block(pad_rows(q, 0, tail).view({batch, heads, blocks, w.block, dim}), w.block);
  // Block i's window is rows [i*block, (i+2)*block) of the rows padded by half a window on either
  // side: padded blocks i and i+1, so two shifted slices joined (their backward is two slice copies,
  // where unfold's scatters element by element: 5% of a step at 2 x 1024).
  auto windows = [&](const torch::Tensor& t) {
    const auto rows = pad_rows(t, w.half_window, tail + w.half_window)
                          .view({batch, heads, blocks + 1, w.block, dim})
                          .permute({0, 2, 1, 3, 4});  // [B, blocks+1, A, block, D]
    return torch::cat({rows.narrow(1, 0, blocks), rows.narrow(1, 1, blocks)}, 3)
        .view({batch * blocks, heads, keys, dim});
  };
  auto out = biased_attention(queries, windows(k), windows(v), w.bias, dropout);
  return out.view({batch, blocks, heads, w.block, dim})
      .permute({0, 2, 1, 3, 4})
      .reshape({batch, heads, blocks * w.block, dim})
      .narrow(2, 0, seq);
}

}  // namespace mlm::model

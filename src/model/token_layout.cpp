#include "mlm/model/token_layout.h"

#include <algorithm>
#include <vector>

namespace mlm::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// rows [T,...] into [N,...] at `real` (unique), zeros at `padding` (the rest): each
// row written once. The gradient is the gather of the same rows.
torch::Tensor scatter(const torch::Tensor& rows, const torch::Tensor& real, const torch::Tensor& padding) {
  auto shape = rows.sizes().vec();
  shape[0] = real.numel() + padding.numel();
  auto out = torch::empty(shape, rows.options());
  out.index_copy_(0, real, rows);
  return out.index_fill_(0, padding, 0);
}

// The two directions as one pair of autograd functions, each the other's backward: ATen's
// index_select would take index_add (accumulating) for its backward, and a scatter into zeros
// writes every padded row twice.
struct GatherRows : torch::autograd::Function<GatherRows> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& real,
                               const torch::Tensor& padding) {
    ctx->save_for_backward({real, padding});
    return x.index_select(0, real);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    return {scatter(grads[0], saved[0], saved[1]), torch::Tensor(), torch::Tensor()};
  }
};

struct ScatterRows : torch::autograd::Function<ScatterRows> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& rows, const torch::Tensor& real,
                               const torch::Tensor& padding) {
    ctx->save_for_backward({real});
    return scatter(rows, real, padding);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    return {grads[0].index_select(0, ctx->get_saved_variables()[0]), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

TokenLayout TokenLayout::of(const torch::Tensor& attention_mask, bool has_padding, const torch::Tensor& document_ids,
                            const LayoutCounts& counts, double min_padding_share, int64_t row_multiple) {
  TokenLayout layout;
  if (!has_padding || !attention_mask.defined()) return layout;
  TORCH_CHECK(attention_mask.dim() == 2, "attention_mask must be [B,S], got ", attention_mask.sizes());
  const int64_t batch = attention_mask.size(0), seq = attention_mask.size(1), positions = attention_mask.numel();
  const auto real = attention_mask.ne(0);
  // The token count decides the shapes: the host's when it has it, else one read.
  const int64_t tokens = counts.tokens >= 0 ? counts.tokens : real.sum().item<int64_t>();
  if (tokens == 0 || static_cast<double>(positions - tokens) < min_padding_share * static_cast<double>(positions)) {
    return layout;
  }
  // The row count rounded up to kRowMultiple with the first padding positions: products of a
  // handful of shapes, whose kernels oneDNN builds once, instead of a new shape (and a new
  // JIT-compiled kernel) for nearly every batch.
  const int64_t rows = (tokens + row_multiple - 1) / row_multiple * row_multiple;
  if (rows >= positions) return layout;
  // Real tokens first in row-major order, then the padding positions in order: a stable sort
  // on "is padding", with static shapes and no read of the device.
  const auto order = std::get<1>(
      torch::sort(attention_mask.eq(0).reshape(-1).to(torch::kInt32), std::optional<bool>(true), 0, /*descending=*/false));
  layout.indices_ = order.narrow(0, 0, rows);
  layout.padding_ = order.narrow(0, rows, positions - rows);
  layout.batch_ = batch;
  layout.seq_ = seq;

  // A row's tokens are contiguous when at most one of them follows a padding position (or
  // starts the row).
  const auto before = torch::cat({torch::zeros({batch, 1}, real.options()), real.narrow(1, 0, seq - 1)}, 1);
  const auto starts = real.gt(before);  // a token after padding (or at the start)
  layout.contiguous_ = starts.sum(1).le(1).all();

  const auto longs = attention_mask.options().dtype(torch::kLong);
  torch::Tensor ends;  // each segment's end among the token rows
  if (!document_ids.defined()) {
    ends = real.sum(1).cumsum(0);  // [B]: a row without tokens is an empty segment
  } else {
    TORCH_CHECK(document_ids.sizes() == attention_mask.sizes(), "document_ids ", document_ids.sizes(),
                " and attention_mask ", attention_mask.sizes(), " differ in shape");
    // Token rows i-1 and i are in one segment when they share the row and the document.
    const auto token_rows = order.narrow(0, 0, tokens).to(torch::kLong);
    const auto row = token_rows.div(seq, /*rounding_mode=*/"floor");
    const auto doc = document_ids.reshape(-1).gather(0, token_rows);
    auto first = torch::ones({tokens}, longs.dtype(torch::kBool));
    if (tokens > 1) {
      first.narrow(0, 1, tokens - 1)
          .copy_(row.narrow(0, 1, tokens - 1).ne(row.narrow(0, 0, tokens - 1)) |
                 doc.narrow(0, 1, tokens - 1).ne(doc.narrow(0, 0, tokens - 1)));
    }
    const int64_t segments = counts.segments >= 0 ? counts.segments : first.sum().item<int64_t>();
    // Segment of token row i: the starts up to i, less one; its end: the last row's i + 1.
    const auto segment = first.to(torch::kLong).cumsum(0) - 1;
    ends = torch::zeros({segments}, longs).scatter_reduce_(0, segment, torch::arange(1, tokens + 1, longs), "amax");
  }
  std::vector<torch::Tensor> bounds{torch::zeros({1}, longs), ends};
  if (rows > tokens) bounds.push_back(torch::full({1}, rows, longs));  // the padding rows' segment
  layout.segments_.cu_seqlens = torch::cat(bounds).to(torch::kInt32);
  layout.segments_.max_seqlen = std::max(seq, rows - tokens);
  return layout;
}

torch::Tensor TokenLayout::positions() const {
  TORCH_CHECK(unpadded(), "positions: the identity layout has no rows");
  return indices_.remainder(seq_);
}

void TokenLayout::check_tokens_contiguous() const {
  TORCH_CHECK(unpadded(), "check_tokens_contiguous: the identity layout has no rows");
  at::_assert_async(contiguous_, "a row's real tokens are not contiguous: a sliding window over unpadded rows "
                                 "needs each row's padding at its start or end");
}

torch::Tensor TokenLayout::unpad(const torch::Tensor& x) const {
  if (!unpadded()) return x;
  TORCH_CHECK(x.dim() >= 2 && x.size(0) == batch_ && x.size(1) == seq_, "unpad: expected [", batch_, ",", seq_,
              ",...], got ", x.sizes());
  const auto flat = x.flatten(0, 1);
  if (!flat.requires_grad()) return flat.index_select(0, indices_);  // ids, masks
  return GatherRows::apply(flat, indices_, padding_);
}

torch::Tensor TokenLayout::pad(const torch::Tensor& rows) const {
  if (!unpadded()) return rows;
  TORCH_CHECK(rows.dim() >= 1 && rows.size(0) == indices_.numel(), "pad: expected ", indices_.numel(),
              " rows, got ", rows.sizes());
  auto padded = rows.requires_grad() ? ScatterRows::apply(rows, indices_, padding_) : scatter(rows, indices_, padding_);
  auto shape = rows.sizes().vec();
  shape[0] = seq_;
  shape.insert(shape.begin(), batch_);
  return padded.view(shape);
}

}  // namespace mlm::model

#include "mlm/model/token_layout.h"

namespace mlm::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

// rows [T,...] into [N,...] at `real` (ascending, unique), zeros at `padding` (the rest): each
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

TokenLayout TokenLayout::of(const torch::Tensor& attention_mask, bool has_padding, double min_padding_share,
                            int64_t row_multiple) {
  TokenLayout layout;
  if (!has_padding || !attention_mask.defined()) return layout;
  TORCH_CHECK(attention_mask.dim() == 2, "attention_mask must be [B,S], got ", attention_mask.sizes());
  const auto flat = attention_mask.reshape(-1);
  const auto real = flat.nonzero().squeeze(1);  // one host sync on a GPU
  const auto positions = attention_mask.numel();
  if (static_cast<double>(positions - real.numel()) < min_padding_share * static_cast<double>(positions)) {
    return layout;
  }
  // The row count rounded up to kRowMultiple with the first padding positions: products of a
  // handful of shapes, whose kernels oneDNN builds once, instead of a new shape (and a new
  // JIT-compiled kernel) for nearly every batch.
  const int64_t rows = (real.numel() + row_multiple - 1) / row_multiple * row_multiple;
  if (rows >= positions) return layout;
  auto padding = flat.eq(0).nonzero().squeeze(1);
  const int64_t extra = rows - real.numel();
  layout.indices_ = extra > 0 ? std::get<0>(torch::cat({real, padding.narrow(0, 0, extra)}).sort()) : real;
  layout.padding_ = padding.narrow(0, extra, padding.numel() - extra);
  layout.batch_ = attention_mask.size(0);
  layout.seq_ = attention_mask.size(1);
  return layout;
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

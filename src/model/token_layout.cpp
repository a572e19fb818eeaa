#include "mlm/model/token_layout.h"

namespace mlm::model {

TokenLayout TokenLayout::of(const torch::Tensor& attention_mask, bool has_padding, double min_padding_share) {
  TokenLayout layout;
  if (!has_padding || !attention_mask.defined()) return layout;
  TORCH_CHECK(attention_mask.dim() == 2, "attention_mask must be [B,S], got ", attention_mask.sizes());
  const auto indices = attention_mask.reshape(-1).nonzero().squeeze(1);  // one host sync on a GPU
  const auto positions = attention_mask.numel();
  if (static_cast<double>(positions - indices.numel()) < min_padding_share * static_cast<double>(positions)) {
    return layout;
  }
  layout.indices_ = indices;
  layout.batch_ = attention_mask.size(0);
  layout.seq_ = attention_mask.size(1);
  return layout;
}

torch::Tensor TokenLayout::unpad(const torch::Tensor& x) const {
  if (!unpadded()) return x;
  TORCH_CHECK(x.dim() >= 2 && x.size(0) == batch_ && x.size(1) == seq_, "unpad: expected [", batch_, ",", seq_,
              ",...], got ", x.sizes());
  return x.flatten(0, 1).index_select(0, indices_);
}

torch::Tensor TokenLayout::pad(const torch::Tensor& rows) const {
  if (!unpadded()) return rows;
  TORCH_CHECK(rows.dim() >= 1 && rows.size(0) == indices_.numel(), "pad: expected ", indices_.numel(),
              " rows, got ", rows.sizes());
  auto shape = rows.sizes().vec();
  shape[0] = batch_ * seq_;
  auto padded = torch::zeros(shape, rows.options()).index_copy(0, indices_, rows);
  shape[0] = seq_;
  shape.insert(shape.begin(), batch_);
  return padded.view(shape);
}

}  // namespace mlm::model

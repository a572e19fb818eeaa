#pragma once
// Unpadded layers (MosaicBERT's and ModernBERT's unpadding): after the embeddings, a padded
// batch's real tokens become T rows [T,H], and the layers' projections, feed-forward blocks,
// norms and dropouts run on those rows only; the rows are scattered back into [B,S,...] for
// attention alone, whose keys must line up by position. A batch without padding keeps its
// [B,S,H] shape throughout (the identity layout), so nothing is gathered for it.
#include <torch/torch.h>

#include <cstdint>

namespace mlm::model {

class TokenLayout {
 public:
  /// The identity layout: every position is a token, tensors stay [B,S,...].
  TokenLayout() = default;

  /// The real tokens of attention_mask [B,S] (1 = token). The identity layout when the mask is
  /// undefined, has_padding is false, or padding is under min_padding_share of the positions
  /// (there the gathers and scatters cost more than the rows they save), or when the rows
  /// rounded up to `row_multiple` would be every position.
  static TokenLayout of(const torch::Tensor& attention_mask, bool has_padding,
                        double min_padding_share = kMinPaddingShare, int64_t row_multiple = kRowMultiple);

  /// The padding share below which unpadding does not pay (measured: docs/PERFORMANCE.md).
  static constexpr double kMinPaddingShare = 0.15;
  /// The rows are the real tokens and as many padding positions as round their count up to a
  /// multiple of this (the padding rows are computed and dropped like any padding).
  static constexpr int64_t kRowMultiple = 128;

  bool unpadded() const { return indices_.defined(); }

  /// [B,S,...] -> [T,...]: the real tokens' rows in order (row-major), with a few padding rows
  /// (kRowMultiple). Identity: x itself.
  torch::Tensor unpad(const torch::Tensor& x) const;

  /// [T,...] -> [B,S,...], zeros at the padding. Identity: rows itself.
  torch::Tensor pad(const torch::Tensor& rows) const;

 private:
  torch::Tensor indices_;  // [T] int64 flat indices b*S+s of the real tokens, ascending
  torch::Tensor padding_;  // [B*S-T] the padding's, ascending
  int64_t batch_ = 0, seq_ = 0;
};

}  // namespace mlm::model

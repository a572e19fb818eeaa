#pragma once
// Unpadded layers (MosaicBERT's and ModernBERT's unpadding): after the embeddings, a padded
// batch's real tokens become T rows [T,H], and the layers' projections, feed-forward blocks,
// norms and dropouts run on those rows only. Attention either scatters the rows back into
// [B,S,...] (keys must line up by position under a padding mask), or, on CUDA, takes the rows
// as they are with the layout's segments (varlen_attention.h). A batch without padding keeps
// its [B,S,H] shape throughout (the identity layout), so nothing is gathered for it.
//
// The rows are the real tokens in row-major order, then (rounding their count up) the first
// padding positions: each sequence's tokens are one run of rows, so the segments of variable-
// length attention are cumulative row counts, computed on the device without reading it.
#include <torch/torch.h>

#include <cstdint>

#include "mlm/model/varlen_attention.h"

namespace mlm::model {

/// What the host knows of a batch before it reaches the device (to_bert_inputs counts it in
/// the collated arrays): with it TokenLayout::of sizes every tensor without reading the device.
/// -1: unknown, read from the device (a synchronisation on a GPU).
struct LayoutCounts {
  int64_t tokens = -1;    // real tokens: the sum of attention_mask
  int64_t segments = -1;  // runs of real tokens of one document within a row, in row-major
                          //   order (read only when document ids are given)
};

class TokenLayout {
 public:
  /// The identity layout: every position is a token, tensors stay [B,S,...].
  TokenLayout() = default;

  /// The real tokens of attention_mask [B,S] (1 = token). The identity layout when the mask is
  /// undefined, has_padding is false, there are no tokens, or padding is under
  /// min_padding_share of the positions (there the gathers and scatters cost more than the
  /// rows they save), or when the rows rounded up to `row_multiple` would be every position.
  /// document_ids [B,S] (undefined: each row one sequence) splits a row's tokens into the
  /// segments of its documents (model.attend_across_documents false).
  static TokenLayout of(const torch::Tensor& attention_mask, bool has_padding,
                        const torch::Tensor& document_ids = {}, const LayoutCounts& counts = {},
                        double min_padding_share = kMinPaddingShare, int64_t row_multiple = kRowMultiple);
  /// The same for a mask alone, with the thresholds given (tests).
  static TokenLayout of(const torch::Tensor& attention_mask, bool has_padding, double min_padding_share,
                        int64_t row_multiple = kRowMultiple) {
    return of(attention_mask, has_padding, {}, {}, min_padding_share, row_multiple);
  }

  /// The padding share below which unpadding does not pay (measured: docs/PERFORMANCE.md).
  static constexpr double kMinPaddingShare = 0.15;
  /// The rows are the real tokens and as many padding positions as round their count up to a
  /// multiple of this (the padding rows are computed and dropped like any padding).
  static constexpr int64_t kRowMultiple = 128;

  bool unpadded() const { return indices_.defined(); }

  /// [B,S,...] -> [T,...]: the real tokens' rows in row-major order, then a few padding rows
  /// (kRowMultiple). Identity: x itself.
  torch::Tensor unpad(const torch::Tensor& x) const;

  /// [T,...] -> [B,S,...], zeros at the padding. Identity: rows itself.
  torch::Tensor pad(const torch::Tensor& rows) const;

  /// Unpadded only. The rows' segments for variable-length attention: each row's tokens (or
  /// each document's, with document ids), then the padding rows as one segment of their own
  /// (their output is dropped; this keeps it finite). max_seqlen: the longer of S and the
  /// padding rows, a bound the host knows.
  const VarlenSegments& segments() const { return segments_; }
  /// Unpadded only: [T] int64, each row's position within its sequence (rotary tables).
  torch::Tensor positions() const;
  /// Unpadded only: fails (asynchronously on a GPU: a device-side assertion) unless each row's
  /// real tokens are contiguous, as a sliding window over the segments' rows needs (every
  /// collator pads on the right).
  void check_tokens_contiguous() const;

 private:
  torch::Tensor indices_;  // [T] int64 flat indices b*S+s: the real tokens, then padding
  torch::Tensor padding_;  // [B*S-T] the padding's not in indices_
  torch::Tensor contiguous_;  // [] bool: each row's tokens are one run
  VarlenSegments segments_;
  int64_t batch_ = 0, seq_ = 0;
};

}  // namespace mlm::model

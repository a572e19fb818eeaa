// Variable-length attention's meaning, on the CPU: the layout's segments (cu_seqlens) computed
// on the device from the mask (and documents), and the per-segment reference over the rows
// giving the padded path's outputs and gradients: under a key mask (BERT), under the banded
// sliding window (ModernBERT's local layers) and with documents kept apart.
#include <gtest/gtest.h>

#include <vector>

#include "mlm/model/layers.h"
#include "mlm/model/modernbert/local_attention.h"
#include "mlm/model/token_layout.h"
#include "mlm/model/varlen_attention.h"
#include "model_test_util.h"

namespace mlm::model::varlen_attention_test {
using testing::expect_tensor_near;

std::vector<int64_t> values(const torch::Tensor& t) {
  const auto c = t.to(torch::kCPU, torch::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// Right-padded rows of these lengths, S positions each.
torch::Tensor mask_of(const std::vector<int64_t>& lengths, int64_t seq) {
  auto mask = torch::zeros({static_cast<int64_t>(lengths.size()), seq}, torch::kLong);
  for (size_t b = 0; b < lengths.size(); ++b) mask[static_cast<int64_t>(b)].narrow(0, 0, lengths[b]).fill_(1);
  return mask;
}

TEST(VarlenSegments, AreTheRowsTokenCountsThenThePaddingRows) {
  const auto mask = mask_of({6, 2, 0, 4}, 8);  // 12 tokens of 32 positions
  const auto layout = TokenLayout::of(mask, true, 0.05, /*row_multiple=*/8);  // 16 rows
  ASSERT_TRUE(layout.unpadded());
  EXPECT_EQ(values(layout.segments().cu_seqlens), (std::vector<int64_t>{0, 6, 8, 8, 12, 16}));
  EXPECT_EQ(layout.segments().cu_seqlens.scalar_type(), torch::kInt32);
  EXPECT_EQ(layout.segments().max_seqlen, 8);
  // Row order: the tokens row after row, then the first padding positions.
  const auto flat = torch::arange(32, torch::kLong).view({4, 8, 1});
  EXPECT_EQ(values(layout.unpad(flat)),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 8, 9, 24, 25, 26, 27, 6, 7, 10, 11}));
  EXPECT_EQ(values(layout.positions()), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 0, 1, 0, 1, 2, 3, 6, 7, 2, 3}));
  // No padding rows: no segment for them.
  const auto exact = TokenLayout::of(mask, true, 0.05, /*row_multiple=*/4);
  EXPECT_EQ(values(exact.segments().cu_seqlens), (std::vector<int64_t>{0, 6, 8, 8, 12}));
  // The host's count gives the same layout without reading the mask's sum.
  const auto counted = TokenLayout::of(mask, true, {}, LayoutCounts{12, -1}, 0.05, 8);
  EXPECT_EQ(values(counted.segments().cu_seqlens), values(layout.segments().cu_seqlens));
  EXPECT_EQ(values(counted.unpad(flat)), values(layout.unpad(flat)));
}

TEST(VarlenSegments, SplitARowAtItsDocuments) {
  const auto mask = mask_of({7, 3}, 10);
  const auto documents = torch::tensor({1, 1, 1, 2, 2, 3, 3, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, torch::kLong)
                             .view({2, 10});
  const auto layout = TokenLayout::of(mask, true, documents, {}, 0.05, 1);
  EXPECT_EQ(values(layout.segments().cu_seqlens), (std::vector<int64_t>{0, 3, 5, 7, 10}));
  // The host's count of the runs (batch_tensors) sizes the same segments.
  const auto counted = TokenLayout::of(mask, true, documents, LayoutCounts{10, 4}, 0.05, 1);
  EXPECT_EQ(values(counted.segments().cu_seqlens), (std::vector<int64_t>{0, 3, 5, 7, 10}));
}

TEST(VarlenSegments, ASlidingWindowNeedsEachRowsTokensContiguous) {
  const auto right = mask_of({5, 2}, 8);
  EXPECT_NO_THROW(TokenLayout::of(right, true, 0.05, 1).check_tokens_contiguous());
  auto left = torch::zeros({2, 8}, torch::kLong);
  left[0].narrow(0, 3, 5).fill_(1);
  left[1].narrow(0, 6, 2).fill_(1);
  EXPECT_NO_THROW(TokenLayout::of(left, true, 0.05, 1).check_tokens_contiguous()) << "left padding";
  auto holes = right.clone();
  holes[0][2] = 0;
  EXPECT_THROW(TokenLayout::of(holes, true, 0.05, 1).check_tokens_contiguous(), c10::Error);
}

TEST(VarlenAttentionReference, RejectsSegmentsThatDoNotCoverTheRows) {
  const auto q = torch::randn({5, 2, 4});
  VarlenSegments short_of{torch::tensor({0, 3}, torch::kInt32), 3};
  EXPECT_THROW(varlen_attention_reference(q, q, q, short_of, kNoWindow, 0.0), c10::Error);
  VarlenSegments longer{torch::tensor({0, 5}, torch::kInt32), 4};
  EXPECT_THROW(varlen_attention_reference(q, q, q, longer, kNoWindow, 0.0), c10::Error) << "over max_seqlen";
  VarlenSegments int64{torch::tensor({0, 5}, torch::kLong), 5};
  EXPECT_THROW(varlen_attention_reference(q, q, q, int64, kNoWindow, 0.0), c10::Error);
  EXPECT_FALSE(varlen_attention_supported(q, kNoWindow, 0.0)) << "a CPU tensor";
}

struct Heads {
  torch::Tensor q, k, v;  // [B,A,S,D], requiring gradients
};

Heads random_heads(int64_t batch, int64_t seq) {
  torch::manual_seed(11);
  auto make = [&] { return torch::randn({batch, 3, seq, 8}, torch::requires_grad()); };
  return {make(), make(), make()};
}

// [B,A,S,D] -> the layout's rows [T,A,D].
torch::Tensor rows_of(const TokenLayout& layout, const torch::Tensor& heads) {
  return layout.unpad(heads.permute({0, 2, 1, 3}));
}

// The padded result at the tokens, and the gradients of q, k, v under weights on the tokens
// alone, against the reference over the rows.
void expect_same_at_tokens(const Heads& h, const torch::Tensor& padded, const TokenLayout& layout,
                           const torch::Tensor& mask, int64_t half_window) {
  const auto rows = varlen_attention_reference(rows_of(layout, h.q), rows_of(layout, h.k), rows_of(layout, h.v),
                                               layout.segments(), half_window, 0.0);
  const auto tokens = mask.sum().item<int64_t>();
  const auto padded_rows = rows_of(layout, padded);
  expect_tensor_near(rows.narrow(0, 0, tokens), padded_rows.narrow(0, 0, tokens), 1e-5, "output at the tokens");
  const auto weights = torch::randn_like(padded) * mask.view({mask.size(0), 1, mask.size(1), 1});
  const auto want = torch::autograd::grad({(padded * weights).sum()}, {h.q, h.k, h.v});
  const auto got = torch::autograd::grad({(rows * rows_of(layout, weights)).sum()}, {h.q, h.k, h.v});
  for (size_t i = 0; i < 3; ++i) expect_tensor_near(got[i], want[i], 1e-5, "gradient of " + std::string("qkv").substr(i, 1));
}

TEST(VarlenAttentionReference, EqualsThePaddedPathUnderAKeyMask) {
  const auto mask = mask_of({12, 5, 9}, 12);
  const auto h = random_heads(3, 12);
  const auto padded = biased_attention(h.q, h.k, h.v, attention_bias_from_mask(mask), 0.0);
  // Rows rounded up to 32: the padding rows' segment is there too.
  const auto layout = TokenLayout::of(mask, true, 0.05, /*row_multiple=*/16);
  ASSERT_EQ(layout.segments().cu_seqlens.numel(), 5);
  expect_same_at_tokens(h, padded, layout, mask, kNoWindow);
}

TEST(VarlenAttentionReference, EqualsTheBandedSlidingWindow) {
  const int64_t seq = 40, half = 4;
  const auto mask = mask_of({40, 23, 9}, seq);
  const auto h = random_heads(3, seq);
  ASSERT_TRUE(banded_window_pays(seq, half)) << "the banded path under test";
  const auto ids = padding_as_document(torch::zeros({3, seq}, torch::kLong), mask);
  const auto window = banded_window(3, seq, half, ids, torch::kCPU, torch::kFloat32);
  const auto padded = banded_attention(h.q, h.k, h.v, window, 0.0);
  const auto layout = TokenLayout::of(mask, true, 0.05, /*row_multiple=*/8);
  expect_same_at_tokens(h, padded, layout, mask, half);
}

TEST(VarlenAttentionReference, EqualsThePaddedPathWithDocumentsKeptApart) {
  const int64_t seq = 16;
  const auto mask = mask_of({16, 11}, seq);
  auto documents = torch::zeros({2, seq}, torch::kLong);
  documents[0].narrow(0, 0, 5).fill_(1);
  documents[0].narrow(0, 5, 11).fill_(2);
  documents[1].narrow(0, 0, 8).fill_(1);
  documents[1].narrow(0, 8, 3).fill_(2);
  const auto h = random_heads(2, seq);
  for (const int64_t half : {kNoWindow, int64_t{2}}) {
    SCOPED_TRACE(half);
    auto allowed = same_document_mask(documents, mask);
    if (half >= 0) allowed = allowed & sliding_window_mask(seq, half, torch::kCPU);
    const auto padded = biased_attention(h.q, h.k, h.v, attention_bias_from_allowed(allowed, torch::kFloat32), 0.0);
    const auto layout = TokenLayout::of(mask, true, documents, {}, 0.05, 1);
    EXPECT_EQ(values(layout.segments().cu_seqlens), (std::vector<int64_t>{0, 5, 16, 24, 27}));
    expect_same_at_tokens(h, padded, layout, mask, half);
  }
}

}  // namespace mlm::model::varlen_attention_test

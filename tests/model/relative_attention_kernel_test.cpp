// kernels::relative_softmax_dropout (DeBERTa's disentangled scores folded into the softmax)
// against relative_softmax_dropout_reference, the ATen composition it replaces: values and the
// gradients of content, c2p and p2c, fp32 and bf16, either term alone, biases of each shape,
// exact (Toeplitz) and bucketed (repeating) pair indices, dropout with the same Philox mask;
// and the gradients against the thread count.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "mlm/model/deberta/deberta.h"
#include "mlm/model/kernels/relative_attention.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::relative_attention_kernel_test {
using testing::expect_tensor_near;

constexpr int64_t kBatch = 3, kHeads = 2, kSeq = 21;

struct RelativeCase {
  const char* what;
  torch::ScalarType dtype;
  bool c2p, p2c;
  bool bucketed;      // DeBERTa-v3's log buckets: distances beyond 4 share rows
  torch::Tensor bias;
  double p;
  bool heads_first = false;  // c2p and p2c in [A,B,S,W] memory, viewed as [B,A,S,W] (the layer's)
};

/// The pairs' rows as DebertaV2Model computes them (exact distances, or 8 log buckets up to 16).
RelativeWindow pair_window(bool bucketed) {
  return bucketed ? deberta_relative_window(kSeq, 8, 16, 8, torch::kCPU)
                  : deberta_relative_window(kSeq, -1, 32, 32, torch::kCPU);
}

/// Values and gradients (content, c2p, p2c; undefined for an absent term) of f at the case.
template <typename F>
std::vector<torch::Tensor> run_relative(const RelativeCase& c, torch::ScalarType dtype, const F& f) {
  const auto window = pair_window(c.bucketed);
  torch::manual_seed(11);
  // Drawn in the case's dtype, so that the fp32 reference starts from the same values.
  const auto draw = [&](int64_t width) { return torch::randn({kBatch, kHeads, kSeq, width}).to(c.dtype).to(dtype); };
  const auto content = draw(kSeq).requires_grad_();
  const auto term = [&] {
    if (!c.heads_first) return draw(window.width).requires_grad_();
    return draw(window.width).transpose(0, 1).contiguous().transpose(0, 1).requires_grad_();
  };
  const auto c2p = term();
  const auto p2c = term();
  const auto upstream = draw(kSeq);
  torch::manual_seed(12);  // the dropout seed
  const auto out = f(content, c.c2p ? c2p : torch::Tensor(), c.p2c ? p2c : torch::Tensor(), window.index, c.bias,
                     0.3, c.p);
  out.backward(upstream);
  return {out.detach(), content.grad(), c.c2p ? c2p.grad() : torch::Tensor(), c.p2c ? p2c.grad() : torch::Tensor()};
}

TEST(RelativeSoftmaxDropout, EqualsTheComposition) {
  const auto padding =
      torch::zeros({kBatch, 1, 1, kSeq}).index_put_({1, 0, 0, torch::indexing::Slice(15)}, -1e30);
  const std::vector<RelativeCase> cases = {
      {"c2p + p2c, exact", torch::kFloat32, true, true, false, torch::Tensor(), 0.0},
      {"c2p + p2c, bucketed, padding", torch::kFloat32, true, true, true, padding, 0.0},
      {"c2p alone, per-query bias", torch::kFloat32, true, false, true, torch::randn({kBatch, 1, kSeq, kSeq}), 0.0},
      {"p2c alone, shared bias", torch::kFloat32, false, true, false, torch::randn({1, 1, kSeq, kSeq}), 0.0},
      {"no relative term", torch::kFloat32, false, false, false, padding, 0.0},
      {"dropout 0.2, bucketed", torch::kFloat32, true, true, true, padding, 0.2},
      {"bf16, dropout 0.1", torch::kBFloat16, true, true, true, padding, 0.1},
      {"terms laid out heads first", torch::kFloat32, true, true, false, padding, 0.2, true},
      {"bf16, terms laid out heads first", torch::kBFloat16, true, true, true, padding, 0.1, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const auto got = run_relative(c, c.dtype, kernels::relative_softmax_dropout);
    const auto want = run_relative(c, torch::kFloat32, kernels::relative_softmax_dropout_reference);
    EXPECT_EQ(got[0].scalar_type(), c.dtype);
    const double atol = c.dtype == torch::kBFloat16 ? 2e-2 : 2e-6;
    const char* names[] = {"probabilities", "content gradient", "c2p gradient", "p2c gradient"};
    if (c.heads_first) EXPECT_EQ(got[2].strides(), want[2].strides()) << "the c2p gradient laid out as c2p";
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].defined(), want[i].defined()) << names[i];
      if (got[i].defined()) expect_tensor_near(got[i].to(torch::kFloat32), want[i], atol, names[i]);
    }
  }
}

TEST(RelativeSoftmaxDropout, ExactPairsReadEveryRowOfTheWindowOnce) {
  // S = 21 exact distances: 41 rows, the middle one (distance 0) at first + 20.
  const auto window = pair_window(false);
  EXPECT_EQ(window.first, 32 - (kSeq - 1));
  EXPECT_EQ(window.width, 2 * kSeq - 1);
  EXPECT_EQ(window.index[5][5].item<int>(), kSeq - 1);
  EXPECT_EQ(window.index[kSeq - 1][0].item<int>(), window.width - 1);  // query - key = S - 1
  const auto bucketed = pair_window(true);
  EXPECT_EQ(bucketed.first, 0);
  EXPECT_EQ(bucketed.width, 16);  // distances up to 20 clamp into the 2 x 8 rows
}

TEST(RelativeSoftmaxDropout, GradientsDoNotDependOnTheThreadCount) {
  const RelativeCase c{"dropout 0.2", torch::kFloat32, true, true, true, torch::Tensor(), 0.2};
  const int saved = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = run_relative(c, torch::kFloat32, kernels::relative_softmax_dropout);
  at::set_num_threads(2);
  const auto two = run_relative(c, torch::kFloat32, kernels::relative_softmax_dropout);
  at::set_num_threads(saved);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(one[i].equal(two[i])) << "output " << i;
}

TEST(RelativeSoftmaxDropout, RefusesAnIndexOfTheWrongShape) {
  const auto content = torch::randn({1, 1, 4, 4});
  const auto c2p = torch::randn({1, 1, 4, 7});
  EXPECT_THROW(kernels::relative_softmax_dropout(content, c2p, torch::Tensor(),
                                                 torch::zeros({4, 3}, torch::kInt32), torch::Tensor(), 1.0, 0.0),
               c10::Error);
  EXPECT_THROW(kernels::relative_softmax_dropout(content, c2p, torch::Tensor(), torch::zeros({4, 4}, torch::kLong),
                                                 torch::Tensor(), 1.0, 0.0),
               c10::Error);
}

}  // namespace mlm::model::relative_attention_kernel_test

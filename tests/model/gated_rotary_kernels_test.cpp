// ModernBERT's fused CPU kernels (kernels/geglu.h, kernels/rotary_embedding.h) against the ATen
// compositions they replace: values and gradients, fp32 and bf16, odd widths, strided inputs,
// shared and per-sequence tables.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "mlm/model/kernels/geglu.h"
#include "mlm/model/kernels/rotary_embedding.h"
#include "mlm/model/layers.h"
#include "model_test_util.h"

namespace mlm::model::kernels {
namespace {
using testing::expect_tensor_near;

struct GatedCase {
  torch::ScalarType dtype;
  config::Activation act;
  int64_t rows, width;
  double atol;
};

TEST(GatedActivation, EqualsTheComposition) {
  const std::vector<GatedCase> cases = {
      {torch::kFloat32, config::Activation::gelu, 37, 45, 2e-6},
      {torch::kFloat32, config::Activation::gelu_tanh, 16, 64, 2e-6},
      {torch::kBFloat16, config::Activation::gelu, 33, 96, 0},
      {torch::kBFloat16, config::Activation::gelu_tanh, 7, 17, 0},
  };
  torch::manual_seed(3);
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.dtype << " " << static_cast<int>(c.act) << " " << c.rows << "x" << c.width);
    // Spread over gelu's interesting range and its tails.
    const auto projected = (torch::randn({c.rows, 2 * c.width}) * 3).to(c.dtype).requires_grad_();
    const auto upstream = torch::randn({c.rows, c.width}).to(c.dtype);
    const auto got = gated_activation(projected, c.act);
    got.backward(upstream);

    // The reference in fp32 from the same inputs, rounded to the dtype once at the end.
    const auto ref_in = projected.detach().to(torch::kFloat32).requires_grad_();
    const auto parts = ref_in.chunk(2, -1);
    const auto want = activation(parts[0], c.act) * parts[1];
    want.backward(upstream.to(torch::kFloat32));

    ASSERT_EQ(got.scalar_type(), c.dtype);
    ASSERT_EQ(projected.grad().scalar_type(), c.dtype);
    // bf16: one rounding of the result (relative 2^-8) against the reference's.
    const bool bf16 = c.dtype == torch::kBFloat16;
    const auto tolerance = [&](const torch::Tensor& reference) {
      return bf16 ? 8e-3 * reference.abs().max().item<double>() : c.atol * (1 + reference.abs().max().item<double>());
    };
    expect_tensor_near(got.to(torch::kFloat32), want, tolerance(want), "values");
    expect_tensor_near(projected.grad().to(torch::kFloat32), ref_in.grad(), tolerance(ref_in.grad()), "gradient");
  }
}

TEST(GatedActivation, KeepsLeadingDimensions) {
  const auto projected = torch::randn({2, 5, 8});
  const auto got = gated_activation(projected, config::Activation::gelu);
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{2, 5, 4}));
  expect_tensor_near(got, torch::gelu(projected.narrow(-1, 0, 4)) * projected.narrow(-1, 4, 4), 2e-6, "values");
}

TEST(GatedActivation, RefusesAnOddWidth) {
  EXPECT_THROW(gated_activation(torch::randn({3, 7}), config::Activation::gelu), c10::Error);
}

/// The composition rotate_by_table replaces, in fp32.
torch::Tensor rotate_reference(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const auto c = cos.dim() == 3 ? cos.unsqueeze(1) : cos;
  const auto s = sin.dim() == 3 ? sin.unsqueeze(1) : sin;
  const int64_t half = x.size(-1) / 2;
  const auto rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * c + rotated * s;
}

TEST(RotateByTable, EqualsTheCompositionOnStridedViews) {
  torch::manual_seed(5);
  const int64_t batch = 3, heads = 2, seq = 11, dim = 10;
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    for (const bool per_sequence : {false, true}) {
      SCOPED_TRACE(::testing::Message() << dtype << (per_sequence ? " per-sequence table" : " shared table"));
      // The key of a fused QKV product: [B,S,3,A,D] permuted to [B,A,S,D], not contiguous.
      const auto fused = torch::randn({batch, seq, 3, heads, dim}).to(dtype).requires_grad_();
      const auto key = fused.permute({2, 0, 3, 1, 4})[1];
      ASSERT_FALSE(key.is_contiguous());
      const auto table_sizes = per_sequence ? std::vector<int64_t>{batch, seq, dim} : std::vector<int64_t>{seq, dim};
      const auto angles = torch::rand(table_sizes) * 6;
      const auto cos = angles.cos(), sin = angles.sin();
      const auto upstream = torch::randn({batch, heads, seq, dim}).to(dtype);
      const auto got = rotate_by_table(key, cos, sin);
      got.backward(upstream);

      const auto ref_fused = fused.detach().to(torch::kFloat32).requires_grad_();
      const auto want = rotate_reference(ref_fused.permute({2, 0, 3, 1, 4})[1], cos, sin);
      want.backward(upstream.to(torch::kFloat32));

      ASSERT_EQ(got.scalar_type(), dtype);
      // bf16: one rounding of the result (relative 2^-8) against the fp32 reference.
      const auto tolerance = [&](const torch::Tensor& reference) {
        return (dtype == torch::kBFloat16 ? 8e-3 : 2e-6) * (1 + reference.abs().max().item<double>());
      };
      expect_tensor_near(got.to(torch::kFloat32), want, tolerance(want), "values");
      expect_tensor_near(fused.grad().to(torch::kFloat32), ref_fused.grad(), tolerance(ref_fused.grad()), "gradient");
    }
  }
}

TEST(RotateByTable, RefusesATableOfAnotherShape) {
  const auto x = torch::randn({1, 2, 4, 6});
  EXPECT_THROW(rotate_by_table(x, torch::ones({5, 6}), torch::ones({5, 6})), c10::Error);
  EXPECT_THROW(rotate_by_table(torch::randn({1, 2, 4, 5}), torch::ones({4, 5}), torch::ones({4, 5})), c10::Error);
}

}  // namespace
}  // namespace mlm::model::kernels

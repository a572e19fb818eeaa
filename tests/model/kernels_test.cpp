// The fused CPU kernels of include/mlm/model/kernels/ against the ATen compositions they
// replace (values and gradients, fp32 and bf16, odd sizes), the Philox generator against
// ATen's, and the masks against the thread count.
#include <ATen/Parallel.h>
#include <ATen/core/PhiloxRNGEngine.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "mlm/model/kernels/attention_dropout.h"
#include "mlm/model/kernels/dropout.h"
#include "mlm/model/kernels/dropout_add_layer_norm.h"
#include "mlm/model/kernels/masked_lm_loss.h"
#include "mlm/model/kernels/parallel_rows.h"
#include "mlm/model/kernels/philox.h"
#include "model_test_util.h"
#include "mlm/model/kernels/fast_log.h"

namespace mlm::model::kernels {
namespace {
using testing::expect_tensor_near;

/// The seed the next kernel call will draw, after torch::manual_seed(seed).
uint64_t seed_after(uint64_t seed) {
  torch::manual_seed(seed);
  return next_mask_seed();
}

/// The float keep factors (0 or 1 / (1 - p)) of the mask under the seed a kernel draws after
/// torch::manual_seed(seed), shaped like `sizes`.
torch::Tensor keep_factors(uint64_t seed, at::IntArrayRef sizes, double p) {
  int64_t numel = 1;
  for (auto s : sizes) numel *= s;
  return keep_mask(numel, p, seed_after(seed)).to(torch::kFloat32).view(sizes) / (1.0 - p);
}

class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(at::get_num_threads()) { at::set_num_threads(n); }
  ~ThreadCount() { at::set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(Philox, EqualsAtenPhiloxEngine) {
  for (uint64_t key : {0ull, 42ull, 0x123456789abcdefull}) {
    for (uint64_t counter : {0ull, 1ull, 7ull, 0xffffffffull, 0x100000003ull}) {
      at::Philox4_32 engine(key, /*subsequence=*/0, /*offset=*/counter);
      const auto mine = philox4x32_10(counter, key);
      for (int lane = 0; lane < 4; ++lane) EXPECT_EQ(mine[lane], engine()) << key << " " << counter << " " << lane;
    }
  }
}

TEST(Philox, MaskSlicesAgreeWithTheWholeAndTheScalarGenerator) {
  const uint64_t seed = 987654321;
  const uint32_t threshold = drop_threshold(0.3);
  const int64_t n = 1000;
  std::vector<uint8_t> whole(n), pieces(n);
  fill_keep_mask(whole.data(), n, 0, seed, threshold);
  // Pieces of odd lengths at odd offsets: the vector blocks and the scalar edges agree.
  for (int64_t start = 0, len = 1; start < n; start += len, len = len * 3 % 97 + 1) {
    fill_keep_mask(pieces.data() + start, std::min(len, n - start), static_cast<uint64_t>(start), seed, threshold);
  }
  EXPECT_EQ(whole, pieces);
  for (int64_t e = 0; e < n; ++e) {
    const auto draw = philox4x32_10(static_cast<uint64_t>(e) / 4, seed)[e % 4];
    ASSERT_EQ(whole[e], draw >= threshold ? 1 : 0) << "element " << e;
  }
}

TEST(Philox, WordsAreTheScalarGeneratorsInAnySlice) {
  const uint64_t seed = 0xfeedbeef;
  const int64_t n = 777;
  std::vector<uint32_t> words(n), pieces(n);
  fill_philox_words(words.data(), n, 5, seed);
  for (int64_t start = 0, len = 1; start < n; start += len, len = len * 5 % 131 + 1)
    fill_philox_words(pieces.data() + start, std::min(len, n - start), static_cast<uint64_t>(5 + start), seed);
  EXPECT_EQ(words, pieces);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t e = static_cast<uint64_t>(5 + i);
    ASSERT_EQ(words[i], philox4x32_10(e / 4, seed)[e % 4]) << "element " << i;
  }
}

// fast_log over the arguments the Gumbel noise gives it (2^-24 .. 17) and beyond: within 4 ulp.
TEST(FastLog, WithinAFewUlpOfStdLog) {
  for (float x = 1e-30f; x < 1e30f; x *= 1.0013f) {
    const float want = std::log(x);
    const float ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
    ASSERT_LE(std::fabs(fast_log(x) - want), 4 * std::max(ulp, 1e-7f)) << x;
  }
}

TEST(Philox, KeepRateWithinFiveSigmaOfOneMinusP) {
  for (double p : {0.1, 0.5}) {
    const int64_t n = 1 << 20;
    const double kept = keep_mask(n, p, 2024).sum().item<double>();
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(kept, n * (1 - p), 5 * sigma) << "p " << p;
  }
}

// The thread-count tests below compare something only where the kernels' rows really split:
// until 2026-12-05 they were built without OpenMP and every kernel ran on one thread.
TEST(KernelThreads, RowsSplitOverLibTorchsThreads) {
#if defined(__clang__)
  GTEST_SKIP() << "clang builds run the kernels on one thread (CMakeLists.txt: one OpenMP runtime)";
#endif
  EXPECT_TRUE(kernels_split_rows());
}

TEST(Philox, MaskDoesNotDependOnTheThreadCount) {
  torch::Tensor one, two;
  {
    ThreadCount threads(1);
    one = keep_mask(300001, 0.1, 77);
  }
  {
    ThreadCount threads(2);
    two = keep_mask(300001, 0.1, 77);
  }
  EXPECT_TRUE(one.equal(two));
}

TEST(Dropout, EqualsTheCompositionWithItsMask) {
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    const auto x = torch::randn({7, 33}).to(dtype).requires_grad_();
    torch::manual_seed(5);
    const auto y = kernels::dropout(x, 0.25, /*training=*/true);
    const auto factors = keep_factors(5, {7, 33}, 0.25);
    expect_tensor_near(y, (x.detach().to(torch::kFloat32) * factors).to(dtype), 0, "values");
    const auto upstream = torch::randn({7, 33}).to(dtype);
    y.backward(upstream);
    expect_tensor_near(x.grad(), (upstream.to(torch::kFloat32) * factors).to(dtype), 0, "gradient");
  }
  const auto x = torch::randn({4});
  EXPECT_TRUE(kernels::dropout(x, 0.25, /*training=*/false).is_same(x));
  EXPECT_TRUE(kernels::dropout(x, 0.0, /*training=*/true).is_same(x));
}

struct NormCase {
  torch::ScalarType x_dtype, residual_dtype;
  int64_t rows, hidden;
  bool with_bias;
  double p;
  double atol;  // values; gradients get 4x
};

TEST(DropoutAddLayerNorm, EqualsTheComposition) {
  const std::vector<NormCase> cases = {
      {torch::kFloat32, torch::kFloat32, 15, 37, true, 0.1, 2e-5},
      {torch::kFloat32, torch::kFloat32, 6, 256, false, 0.3, 2e-5},
      {torch::kBFloat16, torch::kFloat32, 33, 64, true, 0.1, 2e-5},  // BERT under autocast
      {torch::kBFloat16, torch::kBFloat16, 9, 48, true, 0.1, 2e-5},
      {torch::kFloat32, torch::kFloat32, 5, 40, true, 0.0, 2e-5},     // no dropout
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.x_dtype << " + " << c.residual_dtype << " " << c.rows << "x" << c.hidden
                                      << " p " << c.p << (c.with_bias ? " bias" : ""));
    const auto x = (torch::randn({c.rows, c.hidden}) * 2).to(c.x_dtype).requires_grad_();
    const auto residual = torch::randn({c.rows, c.hidden}).to(c.residual_dtype).requires_grad_();
    const auto weight = (torch::rand({c.hidden}) + 0.5).requires_grad_();
    const auto bias = c.with_bias ? torch::randn({c.hidden}).requires_grad_() : torch::Tensor();
    const auto upstream = torch::randn({c.rows, c.hidden});

    torch::manual_seed(11);
    const auto got = dropout_add_layer_norm(x, residual, weight, bias, c.p, 1e-12, /*training=*/true);
    got.backward(upstream);
    const auto got_grads = std::vector<torch::Tensor>{x.grad(), residual.grad(), weight.grad()};
    const auto got_bias_grad = c.with_bias ? bias.grad().clone() : torch::Tensor();

    // The reference in fp32 from the same inputs, with the kernel's mask.
    const auto x32 = x.detach().to(torch::kFloat32).requires_grad_();
    const auto r32 = residual.detach().to(torch::kFloat32).requires_grad_();
    const auto w32 = weight.detach().clone().requires_grad_();
    const auto b32 = c.with_bias ? bias.detach().clone().requires_grad_() : torch::Tensor();
    const auto factors = c.p > 0 ? keep_factors(11, {c.rows, c.hidden}, c.p) : torch::ones({c.rows, c.hidden});
    const auto want = torch::layer_norm(x32 * factors + r32, {c.hidden}, w32, b32, 1e-12);
    want.backward(upstream);

    EXPECT_EQ(got.scalar_type(), torch::kFloat32);
    expect_tensor_near(got, want, c.atol, "values");
    // Gradients in the inputs' dtypes: the fp32 reference rounded the same way.
    expect_tensor_near(got_grads[0], x32.grad().to(c.x_dtype), 4 * c.atol + (c.x_dtype == torch::kBFloat16 ? 2e-2 : 0),
                       "x gradient");
    expect_tensor_near(got_grads[1], r32.grad().to(c.residual_dtype),
                       4 * c.atol + (c.residual_dtype == torch::kBFloat16 ? 2e-2 : 0), "residual gradient");
    expect_tensor_near(got_grads[2], w32.grad(), 4 * c.atol * c.rows, "weight gradient");
    if (c.with_bias) expect_tensor_near(got_bias_grad, b32.grad(), 4 * c.atol * c.rows, "bias gradient");
    EXPECT_EQ(got_grads[0].scalar_type(), c.x_dtype);
    EXPECT_EQ(got_grads[1].scalar_type(), c.residual_dtype);
  }
}

TEST(DropoutAddLayerNorm, WithoutTrainingIsTheNormOfTheSum) {
  const auto x = torch::randn({3, 4, 24});
  const auto residual = torch::randn({3, 4, 24});
  const auto weight = torch::rand({24});
  const auto bias = torch::randn({24});
  expect_tensor_near(dropout_add_layer_norm(x, residual, weight, bias, 0.5, 1e-5, /*training=*/false),
                     torch::layer_norm(x + residual, {24}, weight, bias, 1e-5), 2e-6, "eval");
}

TEST(DropoutAddLayerNorm, GradientsDoNotDependOnTheThreadCount) {
  const auto run = [](int threads) {
    ThreadCount count(threads);
    torch::manual_seed(3);
    const auto x = torch::randn({301, 64}).requires_grad_();
    const auto residual = torch::randn({301, 64}).requires_grad_();
    const auto weight = torch::rand({64}).requires_grad_();
    const auto bias = torch::randn({64}).requires_grad_();
    torch::manual_seed(4);
    dropout_add_layer_norm(x, residual, weight, bias, 0.1, 1e-12, true).pow(2).sum().backward();
    return std::vector<torch::Tensor>{x.grad(), residual.grad(), weight.grad(), bias.grad()};
  };
  const auto one = run(1), two = run(2);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(one[i].equal(two[i])) << "gradient " << i;
}

/// softmax(q k^T / sqrt(D) + bias) * factors @ v, in fp32.
torch::Tensor attention_reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                  const torch::Tensor& bias, const torch::Tensor& factors) {
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(-1)));
  if (bias.defined()) scores = scores + bias;
  return torch::matmul(torch::softmax(scores, -1) * factors, v);
}

TEST(AttentionWithDropout, EqualsTheComposition) {
  const int64_t B = 3, A = 2, S = 19, D = 8;
  const auto padding = torch::zeros({B, 1, 1, S}).index_put_({1, 0, 0, torch::indexing::Slice(14)}, -1e30);
  struct Case {
    torch::ScalarType dtype;
    int64_t rows;
    torch::Tensor bias;
    const char* what;
  };
  const std::vector<Case> cases = {
      {torch::kFloat32, S, torch::Tensor(), "no bias"},
      {torch::kFloat32, S, padding, "padding [B,1,1,S]"},
      {torch::kFloat32, S, torch::randn({B, 1, S, S}), "per query [B,1,S,S]"},
      {torch::kFloat32, S, torch::randn({1, 1, S, S}), "shared [1,1,S,S]"},
      {torch::kFloat32, 5, torch::randn({B, 1, 5, S}), "5 query rows of 19 keys"},
      {torch::kBFloat16, S, padding, "bf16, padding"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const auto q = torch::randn({B, A, c.rows, D}).to(c.dtype).requires_grad_();
    const auto k = torch::randn({B, A, S, D}).to(c.dtype).requires_grad_();
    const auto v = torch::randn({B, A, S, D}).to(c.dtype).requires_grad_();
    const auto upstream = torch::randn({B, A, c.rows, D});
    torch::manual_seed(21);
    const auto got = attention_with_dropout(q, k, v, c.bias, 0.2);
    got.backward(upstream.to(c.dtype));

    const auto q32 = q.detach().to(torch::kFloat32).requires_grad_();
    const auto k32 = k.detach().to(torch::kFloat32).requires_grad_();
    const auto v32 = v.detach().to(torch::kFloat32).requires_grad_();
    const auto want = attention_reference(q32, k32, v32, c.bias, keep_factors(21, {B, A, c.rows, S}, 0.2));
    want.backward(upstream);

    EXPECT_EQ(got.scalar_type(), c.dtype);
    const double atol = c.dtype == torch::kBFloat16 ? 6e-2 : 2e-5;
    expect_tensor_near(got, want, atol, "values");
    expect_tensor_near(q.grad(), q32.grad(), 2 * atol, "q gradient");
    expect_tensor_near(k.grad(), k32.grad(), 2 * atol, "k gradient");
    expect_tensor_near(v.grad(), v32.grad(), 2 * atol, "v gradient");
  }
}

TEST(AttentionWithDropout, TrainingInBf16WithoutDropoutMaterialisesTheScoresAlike) {
  // bf16 training without dropout takes the products and the fused softmax, not SDPA: values
  // and gradients as the fp32 composition's, with a band-like bias as ModernBERT's local layers.
  const int64_t B = 2, A = 3, R = 16, S = 40, D = 8;
  const auto bias = torch::where(torch::rand({B, 1, R, S}).lt(0.3), torch::full({}, -1e30), torch::zeros({}));
  const auto q = torch::randn({B, A, R, D}).to(torch::kBFloat16).requires_grad_();
  const auto k = torch::randn({B, A, S, D}).to(torch::kBFloat16).requires_grad_();
  const auto v = torch::randn({B, A, S, D}).to(torch::kBFloat16).requires_grad_();
  const auto upstream = torch::randn({B, A, R, D});
  const auto got = attention_with_dropout(q, k, v, bias, 0.0);
  got.backward(upstream.to(torch::kBFloat16));

  const auto q32 = q.detach().to(torch::kFloat32).requires_grad_();
  const auto k32 = k.detach().to(torch::kFloat32).requires_grad_();
  const auto v32 = v.detach().to(torch::kFloat32).requires_grad_();
  const auto want = attention_reference(q32, k32, v32, bias, torch::ones({B, A, R, S}));
  want.backward(upstream);
  expect_tensor_near(got, want, 6e-2, "values");
  expect_tensor_near(q.grad(), q32.grad(), 1.2e-1, "q gradient");
  expect_tensor_near(k.grad(), k32.grad(), 1.2e-1, "k gradient");
  expect_tensor_near(v.grad(), v32.grad(), 1.2e-1, "v gradient");
}

TEST(AttentionWithDropout, WithoutDropoutIsScaledDotProductAttention) {
  const auto q = torch::randn({2, 2, 6, 4}), k = torch::randn({2, 2, 6, 4}), v = torch::randn({2, 2, 6, 4});
  const auto bias = torch::randn({2, 1, 6, 6});
  expect_tensor_near(attention_with_dropout(q, k, v, bias, 0.0),
                     attention_reference(q, k, v, bias, torch::ones({2, 2, 6, 6})), 1e-5, "p = 0");
}

TEST(MaskedLmLoss, EqualsCrossEntropyAndArgmaxOnTheRealColumns) {
  namespace F = torch::nn::functional;
  for (auto dtype : {torch::kFloat32, torch::kBFloat16}) {
    SCOPED_TRACE(c10::toString(dtype));
    const int64_t rows = 13, vocab = 1001, padded = 1008;
    auto logits = (torch::randn({rows, padded}) * 3).to(dtype);
    // Padded columns larger than any real one: they must neither win nor weigh.
    logits.narrow(1, vocab, padded - vocab).fill_(50);
    // Row 0: a tie for the maximum, the first one at the label (as argmax reports it).
    logits[0][7] = 20;
    logits[0][9] = 20;
    auto labels = torch::randint(0, vocab, {rows});
    labels[0] = 7;
    labels[1] = logits[1].narrow(0, 0, vocab).argmax().item<int64_t>();
    const auto x = logits.clone().requires_grad_();
    const auto got = masked_lm_loss(x, vocab, labels);
    got.loss_sum.mul(0.5).backward();

    const auto x32 = logits.detach().to(torch::kFloat32).requires_grad_();
    const auto real = x32.narrow(1, 0, vocab);
    const auto want = F::cross_entropy(real, labels, F::CrossEntropyFuncOptions().reduction(torch::kSum));
    want.mul(0.5).backward();
    expect_tensor_near(got.loss_sum, want, 2e-4, "loss");
    EXPECT_EQ(got.correct.item<int64_t>(), real.argmax(1).eq(labels).sum().item<int64_t>());
    EXPECT_GE(got.correct.item<int64_t>(), 2);
    EXPECT_EQ(x.grad().scalar_type(), dtype);
    expect_tensor_near(x.grad(), x32.grad().to(dtype), dtype == torch::kBFloat16 ? 4e-3 : 1e-6, "gradient");
    EXPECT_EQ(x.grad().narrow(1, vocab, padded - vocab).abs().max().item<float>(), 0.0f);
  }
}

TEST(MaskedLmLoss, RefusesALabelOutsideTheVocabulary) {
  EXPECT_THROW(masked_lm_loss(torch::randn({2, 10}), 8, torch::tensor({1, 8})), c10::Error);
}

}  // namespace
}  // namespace mlm::model::kernels

// The fused kernels' GPU paths (the ATen compositions, chosen by device): the same values and
// gradients as the CPU kernels where no randomness enters, and dropout at its rate. Skipped
// without a CUDA device (scripts/gpu_check.sh runs them).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "cuda_skip.h"
#include "mlm/model/kernels/attention_dropout.h"
#include "mlm/model/kernels/dropout.h"
#include "mlm/model/kernels/dropout_add_layer_norm.h"
#include "mlm/model/kernels/masked_lm_loss.h"
#include "model_test_util.h"

namespace mlm::model::kernels {
namespace {
using testing::expect_tensor_near;

const torch::Device kCuda(torch::kCUDA, 0);

/// f on CPU and on the GPU from the same inputs: values and the inputs' gradients agree.
template <typename F>
void expect_same_on_both(const std::vector<torch::Tensor>& inputs, F f, double atol) {
  std::vector<torch::Tensor> cpu, gpu;
  for (const auto& t : inputs) {
    cpu.push_back(t.clone().requires_grad_(t.is_floating_point()));
    gpu.push_back(t.to(kCuda).requires_grad_(t.is_floating_point()));
  }
  const auto on_cpu = f(cpu), on_gpu = f(gpu);
  expect_tensor_near(on_gpu, on_cpu, atol, "values");
  on_cpu.sum().backward();
  on_gpu.sum().backward();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (cpu[i].grad().defined()) expect_tensor_near(gpu[i].grad(), cpu[i].grad(), atol, "gradient " + std::to_string(i));
  }
}

TEST(CudaKernels, DropoutAddLayerNormWithoutDropoutMatchesTheCpu) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  expect_same_on_both({torch::randn({6, 40}), torch::randn({6, 40}), torch::rand({40}) + 0.5, torch::randn({40})},
                      [](const std::vector<torch::Tensor>& t) {
                        return dropout_add_layer_norm(t[0], t[1], t[2], t[3], 0.1, 1e-12, /*training=*/false).pow(2);
                      },
                      1e-4);
}

TEST(CudaKernels, AttentionWithoutDropoutMatchesTheCpu) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  expect_same_on_both({torch::randn({2, 3, 7, 8}), torch::randn({2, 3, 9, 8}), torch::randn({2, 3, 9, 8}),
                       torch::randn({2, 1, 7, 9})},
                      [](const std::vector<torch::Tensor>& t) {
                        return attention_with_dropout(t[0], t[1], t[2], t[3].detach(), 0.0).pow(2);
                      },
                      1e-4);
}

TEST(CudaKernels, MaskedLmLossMatchesTheCpu) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  const auto labels = torch::randint(0, 90, {11});
  expect_same_on_both({torch::randn({11, 96})},
                      [&](const std::vector<torch::Tensor>& t) {
                        return masked_lm_loss(t[0], 90, labels.to(t[0].device())).loss_sum.view({1});
                      },
                      1e-4);
}

TEST(CudaKernels, DropoutKeepsItsRateAndScale) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  const int64_t n = 1 << 20;
  const auto y = kernels::dropout(torch::ones({n}, kCuda), 0.1, /*training=*/true);
  const double kept = y.ne(0).sum().item<double>();
  EXPECT_NEAR(kept, 0.9 * n, 5 * std::sqrt(n * 0.1 * 0.9));
  EXPECT_NEAR(y.max().item<double>(), 1.0 / 0.9, 1e-6);
}

}  // namespace
}  // namespace mlm::model::kernels

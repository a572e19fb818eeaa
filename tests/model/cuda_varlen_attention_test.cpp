// Variable-length attention on a GPU: ATen's fused kernels with cumulative sequence lengths
// (FlashAttention in bf16 / fp16, with the sliding window; the memory-efficient kernel in fp32)
// give the CPU reference's outputs and gradients and the padded CUDA path's, and the models
// run on unpadded rows give the CPU's logits. Skipped without a CUDA device.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_skip.h"
#include "mlm/model/layers.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/token_layout.h"
#include "mlm/model/varlen_attention.h"
#include "model_test_util.h"

namespace mlm::model::cuda_varlen_attention {
using testing::expect_tensor_near;

const torch::Device kCuda(torch::kCUDA, 0);

torch::Tensor right_padded(const std::vector<int64_t>& lengths, int64_t seq) {
  auto mask = torch::zeros({static_cast<int64_t>(lengths.size()), seq}, torch::kLong);
  for (size_t b = 0; b < lengths.size(); ++b) mask[static_cast<int64_t>(b)].narrow(0, 0, lengths[b]).fill_(1);
  return mask;
}

struct KernelCase {
  torch::ScalarType dtype;
  int64_t half_window;
  double atol;
};

TEST(CudaVarlenAttention, MatchesTheReferenceAndThePaddedPath) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  at::globalContext().setAllowTF32CuBLAS(false);
  const int64_t seq = 96, heads = 4, dim = 64;
  const auto mask = right_padded({96, 41, 7, 70}, seq);
  const auto layout = TokenLayout::of(mask.to(kCuda), true, 0.05, /*row_multiple=*/16);
  ASSERT_TRUE(layout.unpadded());
  const int64_t tokens = mask.sum().item<int64_t>(), rows = layout.positions().size(0);
  for (const auto& c : {KernelCase{torch::kBFloat16, kNoWindow, 2e-2}, KernelCase{torch::kBFloat16, 16, 2e-2},
                        KernelCase{torch::kHalf, kNoWindow, 3e-3}, KernelCase{torch::kHalf, 16, 3e-3},
                        KernelCase{torch::kFloat32, kNoWindow, 1e-4}}) {
    SCOPED_TRACE(std::string(c10::toString(c.dtype)) + ", half window " + std::to_string(c.half_window));
    torch::manual_seed(7);
    auto make = [&] { return torch::randn({rows, heads, dim}, kCuda).to(c.dtype).requires_grad_(true); };
    const auto q = make(), k = make(), v = make();
    ASSERT_TRUE(varlen_attention_supported(q, c.half_window, 0.0)) << "the kernel under test";
    const auto out = varlen_attention(q, k, v, layout.segments(), c.half_window, 0.0);
    ASSERT_EQ(out.sizes(), q.sizes());
    EXPECT_EQ(out.scalar_type(), c.dtype);

    // The reference in fp32 on the CPU, from the same values.
    auto cpu = [](const torch::Tensor& t) { return t.detach().to(torch::kCPU, torch::kFloat32).requires_grad_(true); };
    const auto qc = cpu(q), kc = cpu(k), vc = cpu(v);
    VarlenSegments segments{layout.segments().cu_seqlens.cpu(), layout.segments().max_seqlen};
    const auto want = varlen_attention_reference(qc, kc, vc, segments, c.half_window, 0.0);
    expect_tensor_near(out.narrow(0, 0, tokens), want.narrow(0, 0, tokens), c.atol, "output");
    const auto weights = torch::randn({rows, heads, dim});
    const auto got_grads = torch::autograd::grad({(out.to(torch::kFloat32) * weights.to(kCuda)).sum()}, {q, k, v});
    const auto want_grads = torch::autograd::grad({(want * weights).sum()}, {qc, kc, vc});
    for (size_t i = 0; i < 3; ++i) {
      expect_tensor_near(got_grads[i], want_grads[i], 4 * c.atol, "gradient " + std::to_string(i));
    }

    // The padded CUDA path under the key mask (and window) gives the same at the tokens.
    if (c.half_window == kNoWindow) {
      auto padded_heads = [&](const torch::Tensor& t) { return layout.pad(t.detach()).permute({0, 2, 1, 3}); };
      const auto padded = biased_attention(padded_heads(q), padded_heads(k), padded_heads(v),
                                           attention_bias_from_mask(mask.to(kCuda)), 0.0);
      const auto padded_rows = layout.unpad(padded.permute({0, 2, 1, 3}));
      expect_tensor_near(out.narrow(0, 0, tokens), padded_rows.narrow(0, 0, tokens), c.atol, "padded path");
    }
  }
}

TEST(CudaVarlenAttention, DropoutDropsAndStaysFinite) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  const auto layout = TokenLayout::of(right_padded({64, 20}, 64).to(kCuda), true, 0.05, 16);
  const int64_t rows = layout.positions().size(0);
  const auto q = torch::randn({rows, 2, 32}, kCuda).to(torch::kBFloat16).requires_grad_(true);
  const auto none = varlen_attention(q, q, q, layout.segments(), kNoWindow, 0.0);
  const auto dropped = varlen_attention(q, q, q, layout.segments(), kNoWindow, 0.5);
  EXPECT_FALSE(torch::allclose(none, dropped)) << "p = 0.5 changed nothing";
  dropped.sum().backward();
  EXPECT_TRUE(torch::isfinite(q.grad()).all().item<bool>());
}

// The models on a padded batch: on the GPU their attention takes the unpadded rows as they are.
config::ModelConfig tiny(config::Architecture architecture) {
  config::ModelConfig c;
  c.architecture = architecture;
  c.hidden_size = 64;
  c.num_attention_heads = 2;  // heads of 32: every fused kernel takes them
  c.intermediate_size = 96;
  c.num_hidden_layers = 3;
  c.max_position_embeddings = 128;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.sparse_head = false;  // every layer on every token
  if (architecture == config::Architecture::modernbert) {
    c.local_attention = 16;  // |q - k| <= 8 in layers 1 and 2 (model.global_attn_every_n_layers 3)
    c.mlp_dropout = 0.0;
    c.embedding_dropout = 0.0;
  }
  return c;
}

MlmInputs padded_batch(const torch::Device& device) {
  torch::manual_seed(9);
  const auto mask = right_padded({100, 37, 64, 5}, 100);
  MlmInputs in;
  in.attention_mask = mask.to(device);
  in.input_ids = (torch::randint(5, 90, {4, 100}, torch::kLong) * mask).to(device);
  in.token_type_ids = torch::zeros({4, 100}, torch::kLong).to(device);
  in.has_padding = true;
  in.masked_positions = torch::tensor({3, 50, 99, 101, 130, 200, 263, 301, 304}, torch::kLong).to(device);
  in.masked_labels = torch::tensor({7, 8, 9, 10, 11, 12, 13, 14, 15}, torch::kLong).to(device);
  return in;
}

TEST(CudaVarlenAttention, ModelsOnUnpaddedRowsGiveTheCpusLogits) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  at::globalContext().setAllowTF32CuBLAS(false);
  for (const auto architecture : {config::Architecture::bert, config::Architecture::modernbert}) {
    SCOPED_TRACE(config::to_string(architecture));
    torch::manual_seed(1);
    auto model = make_masked_lm(tiny(architecture), 100, 0);
    model->train();
    const auto cpu_in = padded_batch(torch::kCPU);
    ASSERT_TRUE(token_layout_for(cpu_in, tiny(architecture)).unpadded()) << "the path under test";
    const auto want = model->forward(cpu_in, /*return_logits=*/true).mlm_logits;
    model->to(kCuda);
    // fp32: BERT's and ModernBERT's global layers through the memory-efficient kernel.
    const auto fp32 = model->forward(padded_batch(kCuda), true).mlm_logits;
    expect_tensor_near(fp32, want, 2e-4, "fp32 logits");
    // bf16 autocast: every layer through FlashAttention, the local ones with its window.
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    const auto bf16 = model->forward(padded_batch(kCuda), true);
    at::autocast::set_autocast_enabled(at::kCUDA, false);
    at::autocast::clear_cache();
    expect_tensor_near(bf16.mlm_logits.to(torch::kFloat32), want, 0.1, "bf16 logits");
    bf16.mlm_loss_sum.backward();
    for (const auto& p : model->parameters()) {
      if (p.grad().defined()) EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
    }
  }
}

}  // namespace mlm::model::cuda_varlen_attention

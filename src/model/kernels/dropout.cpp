#include "mlm/model/kernels/dropout.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <vector>

#include "mlm/model/kernels/philox.h"
#include "row_math.h"

namespace mlm::model::kernels {
namespace {

constexpr int64_t kMaskGrain = 1 << 14;  // elements per task: ~10 us of Philox

/// y = x * keep * scale, in parallel blocks.
struct PhiloxDropout : torch::autograd::Function<PhiloxDropout> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, double p) {
    const auto input = x.contiguous();
    auto keep = keep_mask(input.numel(), p, next_mask_seed());
    ctx->save_for_backward({keep});
    ctx->saved_data["p"] = p;
    return apply_keep(input, keep, p);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto keep = ctx->get_saved_variables()[0];
    return {apply_keep(grads[0].contiguous(), keep, ctx->saved_data["p"].toDouble()), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor keep_mask(int64_t numel, double p, uint64_t seed) {
  RECORD_FUNCTION("mlm::keep_mask", std::vector<c10::IValue>());
  auto keep = torch::empty({numel}, torch::kUInt8);
  uint8_t* out = keep.data_ptr<uint8_t>();
  const uint32_t threshold = drop_threshold(p);
  at::parallel_for(0, numel, kMaskGrain, [&](int64_t begin, int64_t end) {
    fill_keep_mask(out + begin, end - begin, static_cast<uint64_t>(begin), seed, threshold);
  });
  return keep;
}

torch::Tensor apply_keep(const torch::Tensor& x, const torch::Tensor& keep, double p) {
  RECORD_FUNCTION("mlm::apply_keep", std::vector<c10::IValue>());
  TORCH_CHECK(x.is_contiguous() && keep.numel() == x.numel(), "apply_keep: contiguous x and a mask of its size");
  auto y = torch::empty_like(x);
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  const uint8_t* k = keep.data_ptr<uint8_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "apply_keep", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* out = y.data_ptr<scalar_t>();
    at::parallel_for(0, x.numel(), kMaskGrain, [&](int64_t begin, int64_t end) {
      // Through the kernels' row helpers, a block at a time: the same arithmetic as the
      // fused kernels' mask step (row_keep_scale), vectorised.
      constexpr int64_t kBlock = 4096;
      std::vector<float> block(static_cast<size_t>(std::min(kBlock, end - begin)));
      for (int64_t i = begin; i < end; i += kBlock) {
        const int64_t n = std::min(kBlock, end - i);
        load_row(in + i, block.data(), n);
        row_keep_scale(block.data(), k + i, scale, n);
        store_row(block.data(), out + i, n);
      }
    });
  });
  return y;
}

torch::Tensor dropout(const torch::Tensor& x, double p, bool training) {
  if (!training || p == 0.0) return x;
  if (!x.device().is_cpu()) return torch::dropout(x, p, training);
  return PhiloxDropout::apply(x, p).view(x.sizes());
}

}  // namespace mlm::model::kernels

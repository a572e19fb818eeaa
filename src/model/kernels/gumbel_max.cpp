#include "mlm/model/kernels/gumbel_max.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <ATen/record_function.h>

#include <algorithm>
#include <vector>

#include "mlm/model/kernels/fast_log.h"
#include "mlm/model/kernels/philox.h"
#include "row_math.h"

namespace mlm::model::kernels {
namespace {

// A uniform in (0,1) from a 32-bit draw, 23 bits of it: odd multiples of 2^-24, so that it is
// never 0 or 1 in float and both logarithms stay finite (the Gumbel noise lies in
// [-2.81, 16.6], truncated where the probability is 6e-8).
inline float open_unit(uint32_t draw) { return (static_cast<float>(draw >> 9) + 0.5f) * 0x1p-23f; }

// scores[j] = logits[j] / T - log(-log u_j), in loops the compiler vectorises.
__attribute__((target_clones("avx512f", "avx2", "default")))
void gumbel_scores(float* scores, const uint32_t* draws, float inverse_t, int64_t n) {
  for (int64_t j = 0; j < n; ++j) scores[j] = scores[j] * inverse_t - fast_log(-fast_log(open_unit(draws[j])));
}

template <class T>
void sample_rows(const T* logits, int64_t row_stride, int64_t rows, int64_t vocab, double temperature,
                 uint64_t seed, int64_t* out) {
  const auto inverse_t = static_cast<float>(1.0 / temperature);
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(vocab));
    std::vector<uint32_t> draws(static_cast<size_t>(vocab));
    for (int64_t r = begin; r < end; ++r) {
      // Row r's draws are elements r * vocab ... of the seed's stream: a row is drawn alone.
      fill_philox_words(draws.data(), vocab, static_cast<uint64_t>(r * vocab), seed);
      load_row(logits + r * row_stride, scores.data(), vocab);
      gumbel_scores(scores.data(), draws.data(), inverse_t, vocab);
      out[r] = std::max_element(scores.begin(), scores.end()) - scores.begin();  // the first maximum
    }
  });
}

}  // namespace

torch::Tensor gumbel_max_sample(const torch::Tensor& logits, int64_t vocab, double temperature,
                                std::optional<uint64_t> seed) {
  TORCH_CHECK(logits.dim() == 2 && vocab > 0 && vocab <= logits.size(1), "logits [M, >= ", vocab,
              "] expected, got ", logits.sizes());
  TORCH_CHECK(temperature > 0, "the sampling temperature must be positive, got ", temperature);
  RECORD_FUNCTION("mlm::gumbel_max_sample", std::vector<c10::IValue>());
  torch::NoGradGuard no_grad;
  const auto real = logits.detach().narrow(1, 0, vocab);
  if (!logits.device().is_cpu()) {
    auto options = real.options().dtype(torch::kFloat32);
    const auto u = seed ? torch::rand(real.sizes(), at::detail::createCPUGenerator(*seed),
                                      options.device(torch::kCPU))
                              .to(real.device())
                        : torch::rand(real.sizes(), options);
    // Clamped into (0,1) as the CPU path's draws are.
    const auto noise = -torch::log(-torch::log(u.clamp(1e-12, 1.0 - 1e-7)));
    return (real.to(torch::kFloat32) / temperature + noise).argmax(1);
  }
  const auto input = logits.detach().stride(1) == 1 ? logits.detach() : logits.detach().contiguous();
  auto out = torch::empty({input.size(0)}, torch::TensorOptions().dtype(torch::kInt64));
  const uint64_t key = seed ? *seed : next_mask_seed();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, input.scalar_type(), "gumbel_max_sample", [&] {
    sample_rows(input.data_ptr<scalar_t>(), input.stride(0), input.size(0), vocab, temperature, key,
                out.data_ptr<int64_t>());
  });
  return out;
}

}  // namespace mlm::model::kernels

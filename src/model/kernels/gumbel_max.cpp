#include "mlm/model/kernels/gumbel_max.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <limits>

#include "mlm/model/kernels/philox.h"

namespace mlm::model::kernels {
namespace {

// u in (0,1) from a 32-bit draw: never 0 or 1, so both logarithms stay finite.
inline double open_unit(uint32_t draw) { return (static_cast<double>(draw) + 0.5) * 0x1p-32; }

template <class T>
void sample_rows(const T* logits, int64_t row_stride, int64_t rows, int64_t vocab, double temperature,
                 uint64_t seed, int64_t* out) {
  // Row r's draws are elements r * blocks * 4 ... of the seed's stream: a row is drawn alone.
  const int64_t blocks = (vocab + 3) / 4;
  const double inverse_t = 1.0 / temperature;
  at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* row = logits + r * row_stride;
      double best = -std::numeric_limits<double>::infinity();
      int64_t best_j = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const auto draws = philox4x32_10(static_cast<uint64_t>(r * blocks + b), seed);
        const int64_t first = b * 4;
        for (int64_t k = 0; k < 4 && first + k < vocab; ++k) {
          const double score = static_cast<double>(row[first + k]) * inverse_t -
                               std::log(-std::log(open_unit(draws[k])));
          if (score > best) {
            best = score;
            best_j = first + k;
          }
        }
      }
      out[r] = best_j;
    }
  });
}

}  // namespace

torch::Tensor gumbel_max_sample(const torch::Tensor& logits, int64_t vocab, double temperature,
                                std::optional<uint64_t> seed) {
  TORCH_CHECK(logits.dim() == 2 && vocab > 0 && vocab <= logits.size(1), "logits [M, >= ", vocab,
              "] expected, got ", logits.sizes());
  TORCH_CHECK(temperature > 0, "the sampling temperature must be positive, got ", temperature);
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

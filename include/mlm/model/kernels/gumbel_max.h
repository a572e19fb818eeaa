#pragma once
// Sampling from a softmax by the Gumbel-max trick, as ELECTRA's generator fills the masked
// positions: argmax_j (logit_j / T + g_j), g_j = -log(-log u_j), u_j uniform in (0,1). On the
// CPU the uniforms come from Philox (philox.h), 23 bits of each 32-bit draw as torch.rand's
// float uniforms have, and a row's noise and scores are computed in loops the compiler
// vectorises (fast_log.h), rows in parallel: the samples of a seed are the same whatever the
// thread count. Elsewhere: the ATen composition.
#include <torch/torch.h>

#include <cstdint>
#include <optional>

namespace mlm::model::kernels {

/// One sample per row of logits [M, padded_vocab] among its first `vocab` columns at
/// `temperature` (> 0): int64 [M], no gradient. `seed`: the draws' seed; none = the next seed
/// of the default generator (next_mask_seed on the CPU, the device's generator elsewhere), what
/// a checkpoint's RNG state restores.
torch::Tensor gumbel_max_sample(const torch::Tensor& logits, int64_t vocab, double temperature,
                                std::optional<uint64_t> seed = std::nullopt);

}  // namespace mlm::model::kernels

#pragma once
// mlm-bench --attention: DeBERTa's disentangled self-attention alone (attention.self of one
// layer: the q, k, v and relative projections, the scores, softmax, dropout and context), the
// forward and backward of one layer at the configured shape and precision, with the relative
// rows' LayerNorm each step, timed with the fused scores (kernels::relative_softmax_dropout) and
// with the ATen composition they replace. scripts/peers/deberta_attention_peer.py times
// transformers' DisentangledSelfAttention the same way.
#include <cstdint>
#include <string>

#include "mlm/config/run_config.h"
#include "mlm/train/tools/bench/bench_runner.h"

namespace mlm::train::bench {

/// Milliseconds per layer-step (forward + backward), means over the timed steps.
struct AttentionBenchResult {
  double fused_ms = 0, fused_forward_ms = 0;
  double composition_ms = 0, composition_forward_ms = 0;
  int64_t steps = 0, batch = 0, seq_len = 0, hidden = 0, heads = 0, relative_rows = 0, threads = 0;
  std::string precision, device;
};

/// options.steps timed and options.warmup untimed steps per variant, the variants alternating
/// step by step. ConfigError naming model.architecture unless it is deberta_v2.
AttentionBenchResult run_attention_benchmark(const config::RunConfig& config, const BenchOptions& options);

}  // namespace mlm::train::bench

#pragma once
// Model FLOPs per trained token (docs/ARCHITECTURE.md, "How speed is measured"): the figure
// MFU divides by.
#include <cstdint>

#include "mlm/config/run_config.h"

namespace mlm::train::bench {

/// forward = 2·L·(4H² + 2HI) + 4·L·S·H + 2·p·(H² + H·V), with p the masked fraction when the
/// MLM head runs on selected positions only (model.sparse_head) and 1 otherwise. V is the real
/// (unpadded) vocabulary, as in the eager-PyTorch peer, so both count the same work.
/// Each architecture counts its own (ArchitectureSpec::forward_flops_per_token): ModernBERT
/// 2·L·(4H² + 3HI) (GeGLU's Wi is H × 2I) + Σ_layers 4·H·S_l + the same head, with S_l = S for a
/// global layer and min(S, local_attention + 1) for a sliding-window one; ELECTRA its generator
/// and discriminator.
double forward_flops_per_token(const config::ModelConfig& model, int64_t seq_len, int64_t vocab,
                               double mlm_probability);

/// Forward + backward: 3 × forward.
inline double train_flops_per_token(const config::ModelConfig& model, int64_t seq_len,
                                    int64_t vocab, double mlm_probability) {
  return 3.0 * forward_flops_per_token(model, seq_len, vocab, mlm_probability);
}

}  // namespace mlm::train::bench

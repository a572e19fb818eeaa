#pragma once
// A tiny replaced-token-detection pair of either architecture, for the pair's tests.
#include "mlm/model/architectures.h"
#include "mlm/model/rtd/rtd_pair.h"

namespace mlm::model::testing {

constexpr int64_t kRtdVocab = 97, kRtdPad = 0;

/// A 64-wide, 2-layer discriminator with 32-wide embeddings and a 32-wide generator (one head,
/// intermediate 128), no dropout.
inline config::ModelConfig tiny_rtd_pair(config::Architecture architecture,
                                         config::EmbeddingSharing sharing = config::EmbeddingSharing::shared) {
  config::ModelConfig c;
  c.architecture = architecture;
  c.objective = config::Objective::rtd;
  c.embedding_sharing = sharing;
  c.hidden_size = 64;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 128;
  c.embedding_size = 32;
  c.generator_hidden_ratio = 0.5;
  c.max_position_embeddings = 16;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  if (architecture == config::Architecture::deberta_v2) c.position_buckets = 16;
  return c;
}

/// The pair of `c` built after torch::manual_seed(seed).
inline MaskedLm build_rtd_pair(const config::ModelConfig& c, uint64_t seed) {
  torch::manual_seed(seed);
  return architecture_spec(c.architecture).build(c, kRtdVocab, kRtdPad);
}

}  // namespace mlm::model::testing

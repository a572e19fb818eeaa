#pragma once
// DeBERTa-v2's part of the model.* section: the options it alone reads (transformers'
// DebertaV2Config fields of the same names), with their defaults; ModelConfig holds them as a
// base, so they are model.* keys. type_vocab_size may be 0 under deberta_v2: no token-type
// table, as DeBERTa-v3. Torch-free: part of the config library
// (src/model/deberta/deberta_keys.cpp validates them).
#include <cstdint>
#include <string>
#include <vector>

namespace mlm::config {

class ArchitectureKeys;
struct ModelConfig;

struct DebertaV2Options {
  bool relative_attention = true;          // disentangled attention over relative positions
  int64_t position_buckets = 256;          // log-bucketed relative positions: 2 x buckets rows
                                           // of rel_embeddings (<= 0: no buckets, exact
                                           // distances up to max_relative_positions)
  int64_t max_relative_positions = -1;     // the farthest distance told apart (< 1 =
                                           // max_position_embeddings)
  std::vector<std::string> pos_att_type = {"p2c", "c2p"};  // the disentangled terms, each once:
                                           // c2p (content to position), p2c (position to
                                           // content); scores are scaled by sqrt(d x (1 + count))
  bool share_att_key = true;               // the positions projected by query_proj / key_proj
                                           // (false: own pos_query_proj / pos_key_proj)
  std::string norm_rel_ebd = "layer_norm"; // layer_norm (rel_embeddings through
                                           // encoder.LayerNorm) | none
  bool position_biased_input = false;      // an absolute position table added to the input
                                           // embeddings (DeBERTa-v3: false)
  int64_t conv_kernel_size = 0;            // DeBERTa-v2's convolution after layer 0: only 0
                                           // (none) is computed; any other value is refused

  template <class V>
  void visit(V& v) {
    v("relative_attention", relative_attention);
    v("position_buckets", position_buckets);
    v("max_relative_positions", max_relative_positions);
    v("pos_att_type", pos_att_type);
    v("share_att_key", share_att_key);
    v("norm_rel_ebd", norm_rel_ebd);
    v("position_biased_input", position_biased_input);
    v("conv_kernel_size", conv_kernel_size);
  }
};

/// Whether pos_att_type lists `term` ("c2p" or "p2c").
bool has_pos_att(const ModelConfig& m, const std::string& term);

/// The relative distances told apart on each side, the rel_embeddings' half height
/// (transformers' pos_ebd_size / att_span): position_buckets when > 0, else
/// max_relative_positions, < 1 meaning max_position_embeddings.
int64_t relative_span(const ModelConfig& m);

/// max_relative_positions as transformers resolves it (< 1: max_position_embeddings).
int64_t max_relative_positions(const ModelConfig& m);

/// deberta_v2's keys (config/architecture_keys.h).
const ArchitectureKeys& deberta_v2_keys();

}  // namespace mlm::config

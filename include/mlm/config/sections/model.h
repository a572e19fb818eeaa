#pragma once
// The model.* section: the encoder, its head and the ModernBERT options.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/enums.h"

namespace mlm::config {

struct ModelConfig {
  Architecture architecture = Architecture::bert;  // bert (2018) | modernbert (RoPE, GeGLU,
                                           // pre-norm without biases, local/global attention) |
                                           // electra (BERT layers behind an embedding projection) |
                                           // roberta, xlm_roberta (BERT layers, positions
                                           // numbered from the pad id + 1, no NSP; the two
                                           // differ only in the exported class) |
                                           // deberta_v2 (DeBERTa-v2/v3: disentangled attention
                                           // over relative positions, keys below)
  int64_t vocab_size = 0;                  // 0 = the tokenizer's vocabulary size
  int64_t hidden_size = 768;               // H: width of every layer
  int64_t num_hidden_layers = 12;          // L: encoder layers
  int64_t num_attention_heads = 12;        // A: must divide hidden_size
  int64_t intermediate_size = 3072;        // I: feed-forward width
  Activation hidden_act = Activation::gelu;  // gelu (exact erf, as HF) | gelu_tanh
  double hidden_dropout_prob = 0.1;        // dropout after embeddings, attention output, FFN
  double attention_probs_dropout_prob = 0.1;  // dropout on attention probabilities
  int64_t max_position_embeddings = 512;   // rows of the learned position table
  int64_t type_vocab_size = 2;             // token type (segment) ids
  double layer_norm_eps = 1e-12;           // LayerNorm epsilon (BERT: 1e-12)
  double initializer_range = 0.02;         // std of the normal init of weights
  NormPosition norm = NormPosition::post;  // post (BERT) | pre (pre-LN, final LayerNorm)
  int64_t pad_vocab_multiple = 64;         // pad embedding rows to a multiple (1 = none)
  Objective objective = Objective::mlm;    // mlm | nsp | sop (adds pooler + 2-way head) |
                                           // rtd (electra: generator + discriminator, below)
  bool sparse_head = true;                 // MLM head on selected positions only
  bool activation_checkpointing = false;   // keep each layer's input only and recompute the
                                           // layer in the backward pass (long sequences)
  bool attend_across_documents = true;     // false: a token attends only to its own document
                                           // of a packed sequence (block-diagonal mask)
  std::string init_from;                   // HF-format model directory to start from (rtd:
                                           // a directory with generator/ and discriminator/)

  // electra: the embedding width, and objective rtd: a smaller generator masked LM fills the
  // masked positions with its samples; the encoder (the discriminator) tells replaced from
  // original. (architecture electra with objective mlm trains a generator alone.)
  int64_t embedding_size = 0;              // E: embedding width (0 = hidden_size); each network
                                           // projects E -> its width (ELECTRA-small: 128;
                                           // deberta_v2 too: embed_proj, no bias)
  double generator_hidden_ratio = 0;      // generator width / hidden_size (0 = the
                                           // architecture's: electra 0.25, the paper's 1/4 at
                                           // small, 1/3 at base; deberta_v2 1); its heads
                                           // width/64 (>= 1), its intermediate 4 x width, as
                                           // ELECTRA's code derives (the discriminator's own
                                           // at deberta_v2's full width)
  double generator_layers_ratio = 0;       // generator layers / num_hidden_layers (0 = the
                                           // architecture's: electra 1, deberta_v2 0.5)
  double rtd_weight = 50.0;                // lambda: loss = mlm + lambda * rtd
  double rtd_temperature = 1.0;            // of the Gumbel-max sampling from the generator
  EmbeddingSharing embedding_sharing = EmbeddingSharing::shared;  // shared (ELECTRA) | gdes
                                           // (DeBERTa-v3: the discriminator's token embeddings
                                           // are the generator's, detached, + its own delta)

  // modernbert only (transformers' ModernBertConfig fields of the same names); under modernbert
  // hidden_act is hidden_activation, layer_norm_eps norm_eps, attention_probs_dropout_prob
  // attention_dropout, and hidden_dropout_prob, type_vocab_size and norm are not used.
  int64_t global_attn_every_n_layers = 3;  // layer i attends globally when i % n == 0
  int64_t local_attention = 128;           // sliding window of the other layers: |q - k| <= w/2
  double global_rope_theta = 160000.0;     // RoPE base of the global layers
  double local_rope_theta = 10000.0;       // RoPE base of the sliding-window layers
  bool norm_bias = false;                  // LayerNorms with a bias
  bool attention_bias = false;             // Wqkv and Wo with biases
  bool mlp_bias = false;                   // Wi and Wo with biases
  bool decoder_bias = true;                // the tied decoder's bias
  Activation classifier_activation = Activation::gelu;  // the prediction head's activation
  bool classifier_bias = false;            // the prediction head's dense bias
  double initializer_cutoff_factor = 2.0;  // weights ~ normal truncated at +-factor * std
  double embedding_dropout = 0.0;          // after the embedding norm
  double mlp_dropout = 0.0;                // on the GeGLU product

  // deberta_v2 only (transformers' DebertaV2Config fields of the same names; type_vocab_size
  // may be 0 there: no token-type table, as DeBERTa-v3).
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
    v("architecture", architecture);
    v("vocab_size", vocab_size);
    v("hidden_size", hidden_size);
    v("num_hidden_layers", num_hidden_layers);
    v("num_attention_heads", num_attention_heads);
    v("intermediate_size", intermediate_size);
    v("hidden_act", hidden_act);
    v("hidden_dropout_prob", hidden_dropout_prob);
    v("attention_probs_dropout_prob", attention_probs_dropout_prob);
    v("max_position_embeddings", max_position_embeddings);
    v("type_vocab_size", type_vocab_size);
    v("layer_norm_eps", layer_norm_eps);
    v("initializer_range", initializer_range);
    v("norm", norm);
    v("pad_vocab_multiple", pad_vocab_multiple);
    v("objective", objective);
    v("sparse_head", sparse_head);
    v("activation_checkpointing", activation_checkpointing);
    v("attend_across_documents", attend_across_documents);
    v("init_from", init_from);
    v("embedding_size", embedding_size);
    v("generator_hidden_ratio", generator_hidden_ratio);
    v("generator_layers_ratio", generator_layers_ratio);
    v("rtd_weight", rtd_weight);
    v("rtd_temperature", rtd_temperature);
    v("embedding_sharing", embedding_sharing);
    v("global_attn_every_n_layers", global_attn_every_n_layers);
    v("local_attention", local_attention);
    v("global_rope_theta", global_rope_theta);
    v("local_rope_theta", local_rope_theta);
    v("norm_bias", norm_bias);
    v("attention_bias", attention_bias);
    v("mlp_bias", mlp_bias);
    v("decoder_bias", decoder_bias);
    v("classifier_activation", classifier_activation);
    v("classifier_bias", classifier_bias);
    v("initializer_cutoff_factor", initializer_cutoff_factor);
    v("embedding_dropout", embedding_dropout);
    v("mlp_dropout", mlp_dropout);
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

/// RoBERTa and XLM-R: one body, BERT's layers with fairseq's position numbering.
inline bool is_roberta(Architecture architecture) {
  return architecture == Architecture::roberta || architecture == Architecture::xlm_roberta;
}

/// The position id of a sequence's first token: RoBERTa numbers the non-padding tokens from
/// pad_id + 1 and gives the padding position pad_id (transformers'
/// create_position_ids_from_input_ids); the others number every position from 0.
inline int64_t position_offset(const ModelConfig& m, int64_t pad_id) {
  return is_roberta(m.architecture) ? pad_id + 1 : 0;
}

/// The longest sequence the position table holds (RoBERTa: 512 of its 514 rows, pad id 1).
inline int64_t max_sequence_length(const ModelConfig& m, int64_t pad_id) {
  return m.max_position_embeddings - position_offset(m, pad_id);
}

/// E, the embedding width of architecture electra: embedding_size, 0 meaning hidden_size.
inline int64_t electra_embedding_size(const ModelConfig& m) {
  return m.embedding_size > 0 ? m.embedding_size : m.hidden_size;
}

/// The width of the token embeddings where an architecture factorizes them apart from the
/// hidden size (ELECTRA's embedding_size, 0 meaning hidden_size); 0 for the others, whose
/// embeddings are hidden_size wide.
inline int64_t factorized_embedding_size(const ModelConfig& m) {
  const bool factorized = m.architecture == Architecture::electra || m.architecture == Architecture::deberta_v2;
  return factorized ? electra_embedding_size(m) : 0;
}

/// deberta_v2: whether pos_att_type lists `term` ("c2p" or "p2c").
inline bool has_pos_att(const ModelConfig& m, const std::string& term) {
  return std::find(m.pos_att_type.begin(), m.pos_att_type.end(), term) != m.pos_att_type.end();
}

/// deberta_v2: the relative distances told apart on each side, the rel_embeddings' half height
/// (transformers' pos_ebd_size / att_span): position_buckets when > 0, else
/// max_relative_positions, < 1 meaning max_position_embeddings.
inline int64_t relative_span(const ModelConfig& m) {
  if (m.position_buckets > 0) return m.position_buckets;
  return m.max_relative_positions < 1 ? m.max_position_embeddings : m.max_relative_positions;
}

/// deberta_v2: max_relative_positions as transformers resolves it (< 1: max_position_embeddings).
inline int64_t max_relative_positions(const ModelConfig& m) {
  return m.max_relative_positions < 1 ? m.max_position_embeddings : m.max_relative_positions;
}

/// The generator of objective rtd, derived from the discriminator's shape as ELECTRA's code
/// does: width and depth by the ratios (rounded), one head per 64 dimensions (at least one),
/// an intermediate of 4 x width.
struct GeneratorShape {
  int64_t hidden_size, num_hidden_layers, num_attention_heads, intermediate_size;
};

/// The generator ratios with 0 resolved to the architecture's: ELECTRA's generator is a quarter
/// as wide and as deep, DeBERTa-v3's as wide and half as deep.
inline double generator_hidden_ratio(const ModelConfig& m) {
  if (m.generator_hidden_ratio > 0) return m.generator_hidden_ratio;
  return m.architecture == Architecture::deberta_v2 ? 1.0 : 0.25;
}
inline double generator_layers_ratio(const ModelConfig& m) {
  if (m.generator_layers_ratio > 0) return m.generator_layers_ratio;
  return m.architecture == Architecture::deberta_v2 ? 0.5 : 1.0;
}

inline GeneratorShape generator_shape(const ModelConfig& m) {
  GeneratorShape g;
  g.hidden_size = std::llround(static_cast<double>(m.hidden_size) * generator_hidden_ratio(m));
  g.num_hidden_layers = std::llround(static_cast<double>(m.num_hidden_layers) * generator_layers_ratio(m));
  if (m.architecture == Architecture::deberta_v2 && g.hidden_size == m.hidden_size) {
    // DeBERTa-v3's generator: the discriminator's layers, fewer of them.
    g.num_attention_heads = m.num_attention_heads;
    g.intermediate_size = m.intermediate_size;
  } else {
    g.num_attention_heads = std::max<int64_t>(1, g.hidden_size / 64);
    g.intermediate_size = 4 * g.hidden_size;
  }
  return g;
}

}  // namespace mlm::config

#pragma once
// The model.* section: the encoder, its head, the replaced-token-detection pair and each
// architecture's own options.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/model/deberta/deberta_keys.h"
#include "mlm/model/modernbert/modernbert_keys.h"

namespace mlm::config {

// The keys every architecture reads, the replaced-token-detection pair's, and (as bases, so that
// they stay model.* keys and fields of ModelConfig) the options one architecture alone reads,
// declared with their defaults in its folder (include/mlm/model/<arch>/<arch>_keys.h).
struct ModelConfig : ModernBertOptions, DebertaV2Options {
  Architecture architecture = kDefaultArchitecture;  // bert (2018) | modernbert (RoPE, GeGLU,
                                           // pre-norm without biases, local/global attention) |
                                           // electra (BERT layers behind an embedding projection) |
                                           // roberta, xlm_roberta (BERT layers, positions
                                           // numbered from the pad id + 1, no NSP; the two
                                           // differ only in the exported class) |
                                           // deberta_v2 (DeBERTa-v2/v3: disentangled attention
                                           // over relative positions)
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
    ModernBertOptions::visit(v);
    DebertaV2Options::visit(v);
  }
};

/// The position id of a sequence's first token: pad_id + 1 where the architecture numbers
/// positions from the pad id (RoBERTa, as transformers' create_position_ids_from_input_ids;
/// the padding position is pad_id), else 0.
int64_t position_offset(const ModelConfig& m, int64_t pad_id);

/// The longest sequence the position table holds (RoBERTa: 512 of its 514 rows, pad id 1).
inline int64_t max_sequence_length(const ModelConfig& m, int64_t pad_id) {
  return m.max_position_embeddings - position_offset(m, pad_id);
}

/// E, the embedding width of a factorized embedding: embedding_size, 0 meaning hidden_size.
inline int64_t electra_embedding_size(const ModelConfig& m) {
  return m.embedding_size > 0 ? m.embedding_size : m.hidden_size;
}

/// The width of the token embeddings where an architecture factorizes them apart from the
/// hidden size (ELECTRA's and DeBERTa's embedding_size, 0 meaning hidden_size); 0 for the
/// others, whose embeddings are hidden_size wide.
int64_t factorized_embedding_size(const ModelConfig& m);

/// The generator of objective rtd, derived from the discriminator's shape as ELECTRA's code
/// does: width and depth by the ratios (rounded), one head per 64 dimensions (at least one),
/// an intermediate of 4 x width; at the discriminator's width, DeBERTa-v3 keeps its heads and
/// intermediate size.
struct GeneratorShape {
  int64_t hidden_size, num_hidden_layers, num_attention_heads, intermediate_size;
};

/// The generator ratios with 0 resolved to the architecture's: ELECTRA's generator is a quarter
/// as wide and as deep, DeBERTa-v3's as wide and half as deep.
double generator_hidden_ratio(const ModelConfig& m);
double generator_layers_ratio(const ModelConfig& m);

GeneratorShape generator_shape(const ModelConfig& m);

}  // namespace mlm::config

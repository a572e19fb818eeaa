#pragma once
// ModernBERT's part of the model.* section: the options it alone reads (transformers'
// ModernBertConfig fields of the same names), with their defaults; ModelConfig holds them as a
// base, so they are model.* keys. Under modernbert hidden_act is hidden_activation,
// layer_norm_eps norm_eps, attention_probs_dropout_prob attention_dropout, and
// hidden_dropout_prob, type_vocab_size and norm are not used. Torch-free: part of the config
// library (src/model/modernbert/modernbert_keys.cpp validates them).
#include <cstdint>

#include "mlm/config/enums.h"

namespace mlm::config {

class ArchitectureKeys;

struct ModernBertOptions {
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

  template <class V>
  void visit(V& v) {
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
  }
};

/// modernbert's keys (config/architecture_keys.h).
const ArchitectureKeys& modernbert_keys();

}  // namespace mlm::config

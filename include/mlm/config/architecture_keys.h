#pragma once
// What one architecture says about the model.* keys, torch-free: the config library and the
// tools that link no LibTorch (mlm-data, mlm-tokenizer) validate a run through it. Each
// model/<arch>/ folder defines its ArchitectureKeys in <arch>_keys.cpp, beside the
// ArchitectureSpec of its model (<arch>_spec.cpp), and declares the options it alone reads (their
// defaults, YAML keys and meanings) in include/mlm/model/<arch>/<arch>_keys.h;
// src/model/architecture_keys.cpp registers it with one line. config/ asks it and never switches
// on the architecture.
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/sections/model.h"

namespace mlm::config {

class ArchitectureKeys {
 public:
  virtual ~ArchitectureKeys() = default;

  /// model.architecture's value.
  virtual Architecture architecture() const = 0;

  /// Refuses (ConfigError naming the key, as config/value_checks.h words it) what this
  /// architecture cannot build: its own keys' ranges, the shared keys it takes otherwise
  /// (objective, norm). Called after the keys every architecture shares passed, before the
  /// replaced-token-detection keys are checked.
  virtual void validate(const ModelConfig& model) const {}

  /// The fewest token types a model can be built with: 1, or 0 where no token-type table is a
  /// configuration of its own (DeBERTa-v2's type_vocab_size 0).
  virtual int64_t min_type_vocab_size() const { return 1; }
  /// Positions are numbered from pad_id + 1 (RoBERTa's; transformers'
  /// create_position_ids_from_input_ids): the position table holds pad_id + 1 more rows.
  virtual bool positions_follow_pad_id() const { return false; }
  /// The token embeddings are model.embedding_size wide and projected to hidden_size
  /// (ELECTRA, DeBERTa's embed_proj); elsewhere embedding_size must be 0 or hidden_size.
  virtual bool factorized_embeddings() const { return false; }

  /// model.objective rtd: a generator and discriminator pair of this architecture.
  virtual bool builds_rtd_pair() const { return false; }
  /// The generator's width and depth over the discriminator's when model.generator_hidden_ratio
  /// and generator_layers_ratio are 0: ELECTRA's a quarter as wide and as deep.
  virtual double default_generator_hidden_ratio() const { return 0.25; }
  virtual double default_generator_layers_ratio() const { return 1.0; }
  /// A generator as wide as the discriminator has the discriminator's heads and intermediate
  /// size (DeBERTa-v3); otherwise one head per 64 dimensions and 4 x width (ELECTRA's code).
  virtual bool generator_keeps_layer_shape() const { return false; }

  /// model.* keys (without "model.") that a phase may change though the model is built once
  /// (ModernBERT's RoPE bases: a longer-context phase raises them), and what they are called in
  /// the message refusing them under another architecture.
  struct PhaseKeys {
    std::vector<std::string> keys;
    std::string what;
  };
  virtual PhaseKeys phase_keys() const { return {}; }
};

/// Every registered architecture's keys (src/model/architecture_keys.cpp), in the order of the
/// ArchitectureSpec registration.
const std::vector<const ArchitectureKeys*>& registered_architecture_keys();

/// The keys of `architecture`; ConfigError naming model.architecture when none is registered.
const ArchitectureKeys& architecture_keys(Architecture architecture);

}  // namespace mlm::config

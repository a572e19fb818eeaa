// modernbert's keys: its options' ranges, the MLM head alone, rotary embeddings' even head width;
// its RoPE bases may change between phases.
#include "mlm/model/modernbert/modernbert_keys.h"

#include <string>

#include "mlm/config/architecture_keys.h"
#include "mlm/config/value_checks.h"

namespace mlm::config {
namespace {

using checks::End;

class ModernBertKeys : public ArchitectureKeys {
 public:
  Architecture architecture() const override { return Architecture::modernbert; }

  // The bert keys it shares were checked before.
  void validate(const ModelConfig& model) const override {
    if (model.objective != Objective::mlm) {
      checks::fail("model.objective", std::string(to_string(model.objective)),
                   "has no head in ModernBERT (transformers' ModernBertForMaskedLM is MLM only): set "
                   "model.objective to mlm or model.architecture to bert");
    }
    checks::at_least("model.global_attn_every_n_layers", model.global_attn_every_n_layers, 1,
                     " (1 = every layer attends globally)");
    checks::at_least("model.local_attention", model.local_attention, 2,
                     " (the sliding window: a token sees the tokens within local_attention / 2)");
    checks::positive("model.global_rope_theta", model.global_rope_theta);
    checks::positive("model.local_rope_theta", model.local_rope_theta);
    checks::positive("model.initializer_cutoff_factor", model.initializer_cutoff_factor);
    checks::in_range("model.embedding_dropout", model.embedding_dropout, 0, End::closed, 1, End::open);
    checks::in_range("model.mlp_dropout", model.mlp_dropout, 0, End::closed, 1, End::open);
    if ((model.hidden_size / model.num_attention_heads) % 2 != 0) {
      checks::fail("model.hidden_size", checks::number(model.hidden_size),
                   "gives an odd head width " + checks::number(model.hidden_size / model.num_attention_heads) +
                       "; rotary position embeddings rotate pairs of dimensions: choose hidden_size and "
                       "num_attention_heads with an even quotient");
    }
  }

  PhaseKeys phase_keys() const override { return {{"global_rope_theta", "local_rope_theta"}, "RoPE bases"}; }
};

}  // namespace

const ArchitectureKeys& modernbert_keys() {
  static const ModernBertKeys keys;
  return keys;
}

}  // namespace mlm::config

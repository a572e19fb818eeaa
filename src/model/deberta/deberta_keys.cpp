// deberta_v2's keys: its options' ranges and the shared keys DeBERTa-v2/v3 takes otherwise (post-LN,
// an MLM head or the replaced-token-detection pair, no token-type table allowed, a factorized
// embedding); DeBERTa-v3's generator is as wide as the discriminator and half as deep.
#include "mlm/model/deberta/deberta_keys.h"

#include <algorithm>

#include "mlm/config/architecture_keys.h"
#include "mlm/config/value_checks.h"

namespace mlm::config {
namespace {

using checks::fail;
using checks::number;

class DebertaV2Keys : public ArchitectureKeys {
 public:
  Architecture architecture() const override { return Architecture::deberta_v2; }
  int64_t min_type_vocab_size() const override { return 0; }  // DeBERTa-v3: no token types
  bool factorized_embeddings() const override { return true; }
  bool builds_rtd_pair() const override { return true; }
  double default_generator_hidden_ratio() const override { return 1.0; }
  double default_generator_layers_ratio() const override { return 0.5; }
  bool generator_keeps_layer_shape() const override { return true; }

  // The bert keys it shares were checked before.
  void validate(const ModelConfig& model) const override {
    if (model.objective != Objective::mlm && model.objective != Objective::rtd) {
      fail("model.objective", std::string(to_string(model.objective)),
           "has no head in DeBERTa (transformers' DebertaV2ForMaskedLM, DeBERTa-v3's replaced-token "
           "detection): set model.objective to mlm or rtd");
    }
    if (model.norm == NormPosition::pre) {
      fail("model.norm", "pre", "is not DeBERTa's (transformers' DebertaV2 is post-LN): set it to post");
    }
    if (model.conv_kernel_size != 0) {
      fail("model.conv_kernel_size", number(model.conv_kernel_size),
           "(DeBERTa-v2's convolution layer) is not computed by mlm-train: set it to 0");
    }
    for (size_t i = 0; i < model.pos_att_type.size(); ++i) {
      const auto& term = model.pos_att_type[i];
      if (term != "c2p" && term != "p2c")
        fail("model.pos_att_type", term, "is not a disentangled term: list c2p, p2c or both");
      for (size_t j = 0; j < i; ++j)
        if (model.pos_att_type[j] == term) fail("model.pos_att_type", term, "is listed twice");
    }
    if (model.norm_rel_ebd != "none" && model.norm_rel_ebd != "layer_norm") {
      fail("model.norm_rel_ebd", model.norm_rel_ebd, "must be layer_norm or none");
    }
    if (model.relative_attention && model.position_buckets > 0 &&
        max_relative_positions(model) <= model.position_buckets / 2) {
      fail("model.position_buckets", number(model.position_buckets),
           "needs max_relative_positions (" + number(max_relative_positions(model)) +
               ") above half the buckets: the log buckets cover the distances beyond that");
    }
  }
};

}  // namespace

bool has_pos_att(const ModelConfig& m, const std::string& term) {
  return std::find(m.pos_att_type.begin(), m.pos_att_type.end(), term) != m.pos_att_type.end();
}

int64_t relative_span(const ModelConfig& m) {
  return m.position_buckets > 0 ? m.position_buckets : max_relative_positions(m);
}

int64_t max_relative_positions(const ModelConfig& m) {
  return m.max_relative_positions < 1 ? m.max_position_embeddings : m.max_relative_positions;
}

const ArchitectureKeys& deberta_v2_keys() {
  static const DebertaV2Keys keys;
  return keys;
}

}  // namespace mlm::config

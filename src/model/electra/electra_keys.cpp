// electra's keys: BERT's post-LN layers behind an embedding projection, a masked LM alone or the
// generator of a replaced-token-detection pair; no sentence-pair head.
#include "mlm/model/electra/electra_keys.h"

#include <string>

#include "mlm/config/architecture_keys.h"
#include "mlm/config/value_checks.h"

namespace mlm::config {
namespace {

class ElectraKeys : public ArchitectureKeys {
 public:
  Architecture architecture() const override { return Architecture::electra; }
  bool factorized_embeddings() const override { return true; }
  bool builds_rtd_pair() const override { return true; }

  void validate(const ModelConfig& model) const override {
    if (trains_sentence_pairs(model.objective)) {
      checks::fail("model.objective", std::string(to_string(model.objective)),
                   "has no head in ELECTRA (transformers' Electra classes): set it to rtd or mlm");
    }
    if (model.norm == NormPosition::pre) {
      checks::fail("model.norm", "pre", "is not ELECTRA's (transformers' Electra is post-LN): set it to post");
    }
  }
};

}  // namespace

const ArchitectureKeys& electra_keys() {
  static const ElectraKeys keys;
  return keys;
}

}  // namespace mlm::config

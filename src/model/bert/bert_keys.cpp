// bert, roberta and xlm_roberta read only the model.* keys every architecture shares; RoBERTa's
// body refuses the objectives and norm it does not have.
#include "mlm/model/bert/bert_keys.h"

#include <string>

#include "mlm/config/architecture_keys.h"
#include "mlm/config/value_checks.h"

namespace mlm::config {
namespace {

class BertKeys : public ArchitectureKeys {
 public:
  Architecture architecture() const override { return Architecture::bert; }
};

// RoBERTa's body is BERT's post-LN layers with an MLM head alone (transformers' Roberta classes),
// its positions numbered from the pad id + 1.
class RobertaKeys : public ArchitectureKeys {
 public:
  RobertaKeys(Architecture architecture, std::string hf_class_stem)
      : architecture_(architecture), hf_class_stem_(std::move(hf_class_stem)) {}
  Architecture architecture() const override { return architecture_; }
  bool positions_follow_pad_id() const override { return true; }

  void validate(const ModelConfig& model) const override {
    if (trains_sentence_pairs(model.objective)) {
      checks::fail("model.objective", std::string(to_string(model.objective)),
                   "has no head in RoBERTa, which dropped next-sentence prediction (transformers' " +
                       hf_class_stem_ +
                       "ForMaskedLM is MLM only): set model.objective to mlm or model.architecture to bert");
    }
    if (model.norm == NormPosition::pre) {
      checks::fail("model.norm", "pre", "is not RoBERTa's (transformers' Roberta is post-LN): set it to post");
    }
  }

 private:
  Architecture architecture_;
  std::string hf_class_stem_;
};

}  // namespace

const ArchitectureKeys& bert_keys() {
  static const BertKeys keys;
  return keys;
}

const ArchitectureKeys& roberta_keys() {
  static const RobertaKeys keys(Architecture::roberta, "Roberta");
  return keys;
}

const ArchitectureKeys& xlm_roberta_keys() {
  static const RobertaKeys keys(Architecture::xlm_roberta, "XLMRoberta");
  return keys;
}

}  // namespace mlm::config

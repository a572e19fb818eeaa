// The registration: every architecture mlm-train builds, one line each (its spec lives in its
// folder, model/<arch>/<arch>_spec.cpp). The order is the order messages list them in.
#include "mlm/model/architectures.h"

#include <filesystem>

#include "mlm/model/bert/bert_spec.h"
#include "mlm/model/deberta/deberta_spec.h"
#include "mlm/model/electra/electra_spec.h"
#include "mlm/model/modernbert/modernbert_spec.h"
#include "mlm/util/errors.h"

namespace mlm::model {

const std::vector<const ArchitectureSpec*>& architecture_specs() {
  static const std::vector<const ArchitectureSpec*> specs = {
      &bert_spec(),
      &roberta_spec(),
      &xlm_roberta_spec(),
      &modernbert_spec(),
      &electra_spec(),
      &deberta_v2_spec(),
  };
  return specs;
}

const ArchitectureSpec& architecture_spec(config::Architecture architecture) {
  for (const auto* spec : architecture_specs())
    if (spec->architecture() == architecture) return *spec;
  throw ConfigError("model.architecture " + std::string(config::to_string(architecture)) + " has no registered spec");
}

const ArchitectureSpec* spec_for_model_type(const std::string& model_type) {
  for (const auto* spec : architecture_specs())
    if (spec->hf_model_type() == model_type) return spec;
  return nullptr;
}

const ArchitectureSpec* spec_owning_directory(const std::string& dir) {
  for (const auto* spec : architecture_specs())
    if (spec->owns_directory(dir)) return spec;
  return nullptr;
}

std::string readable_architecture_list() {
  const auto& specs = architecture_specs();
  std::string out;
  for (size_t i = 0; i < specs.size(); ++i)
    out += (i == 0 ? "" : i + 1 == specs.size() ? " and " : ", ") + specs[i]->display_name();
  return out;
}

}  // namespace mlm::model

// The registration of every architecture's model.* keys, one line each (their ArchitectureKeys
// live in the architecture's folder, model/<arch>/<arch>_keys.cpp), in the order of the specs'
// registration (architectures.cpp). Torch-free: compiled into the config library, which
// validates a run without LibTorch; mlm_model_tests checks that both lists name the same
// architectures.
#include "mlm/config/architecture_keys.h"

#include "mlm/model/bert/bert_keys.h"
#include "mlm/model/deberta/deberta_keys.h"
#include "mlm/model/electra/electra_keys.h"
#include "mlm/model/modernbert/modernbert_keys.h"
#include "mlm/util/errors.h"

namespace mlm::config {

const std::vector<const ArchitectureKeys*>& registered_architecture_keys() {
  static const std::vector<const ArchitectureKeys*> keys = {
      &bert_keys(),
      &roberta_keys(),
      &xlm_roberta_keys(),
      &modernbert_keys(),
      &electra_keys(),
      &deberta_v2_keys(),
  };
  return keys;
}

const ArchitectureKeys& architecture_keys(Architecture architecture) {
  for (const auto* keys : registered_architecture_keys())
    if (keys->architecture() == architecture) return *keys;
  throw ConfigError("model.architecture " + std::string(to_string(architecture)) + " has no registered keys",
                    "model.architecture");
}

}  // namespace mlm::config

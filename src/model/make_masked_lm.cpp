#include "mlm/model/make_masked_lm.h"

#include "mlm/model/bert/bert.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/modernbert/modernbert.h"

namespace mlm::model {

MaskedLm make_masked_lm(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id) {
  switch (config.architecture) {
    case config::Architecture::bert:
    case config::Architecture::roberta:
    case config::Architecture::xlm_roberta: return BertForPreTraining(config, vocab_size, pad_id);
    case config::Architecture::modernbert: return ModernBertForMaskedLM(config, vocab_size, pad_id);
    case config::Architecture::electra:
      if (config.objective == config::Objective::rtd) return ElectraForPreTraining(config, vocab_size, pad_id);
      return ElectraForMaskedLM(config, vocab_size, pad_id);
  }
  TORCH_CHECK(false, "unknown model.architecture");
}

}  // namespace mlm::model

#pragma once
// Masked accuracy per source of a mixture (the eval_mlm_accuracy/<source> rows): each source's
// own valid split scored alone, beside the whole valid split's evaluation. Only for a mixture
// of several sources read from their own valid splits (no data.valid_files); each source's
// batches are read once (at most eval.max_batches each) and masked with eval.seed as the
// whole split's are, so an evaluation costs about twice as much.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/dist/communicator.h"
#include "mlm/masking/validation_batches.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train {

class SourceEvaluation {
 public:
  /// Reads each source's valid split for the plan's rank; nothing for a plan it does not apply to.
  SourceEvaluation(const config::DataPlan& plan, const text::Tokenizer& tokenizer);

  /// (source name, masked accuracy) for every source with masked tokens scored, in the order of
  /// data.sources. Collective: every rank calls.
  std::vector<std::pair<std::string, double>> accuracies(model::MaskedLm model, dist::Communicator& comm,
                                                         const torch::Device& device,
                                                         torch::Dtype compute_dtype) const;

 private:
  std::vector<std::pair<std::string, std::unique_ptr<masking::ValidationBatches>>> sources_;
};

}  // namespace mlm::train

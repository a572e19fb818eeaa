#include "mlm/train/loop/source_evaluation.h"

#include "mlm/config/source_weights.h"
#include "mlm/train/loop/evaluator.h"

namespace mlm::train {

SourceEvaluation::SourceEvaluation(const config::DataPlan& plan, const text::Tokenizer& tokenizer) {
  if (plan.data.sources.size() < 2 || !plan.data.valid_files.empty()) return;
  for (size_t s = 0; s < plan.data.sources.size(); ++s) {
    // The source alone: a mixture of one, whose valid split is that source's.
    config::DataPlan single = plan;
    single.data.sources = {plan.data.sources[s]};
    single.data.sources.front().weight = 1;
    single.data.source_weights = {};
    single.data.temperature = 0;
    sources_.emplace_back(config::source_name(plan.data, s),
                          std::make_unique<masking::ValidationBatches>(single, tokenizer));
  }
}

std::vector<std::pair<std::string, double>> SourceEvaluation::accuracies(model::MaskedLm model,
                                                                          dist::Communicator& comm,
                                                                          const torch::Device& device,
                                                                          torch::Dtype compute_dtype) const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, batches] : sources_) {
    const EvalResult result = evaluate(model, *batches, comm, device, compute_dtype);
    if (result.num_masked > 0) out.emplace_back(name, result.masked_accuracy());
  }
  return out;
}

}  // namespace mlm::train

#include "mlm/train/loop/eval_result.h"

#include <cmath>

namespace mlm::train {

double EvalResult::masked_accuracy() const {
  return num_masked > 0 ? static_cast<double>(mlm_correct) / static_cast<double>(num_masked) : 0.0;
}
double EvalResult::unigram_accuracy() const {
  return num_masked > 0 ? static_cast<double>(unigram_correct) / static_cast<double>(num_masked)
                        : 0.0;
}
double EvalResult::mlm_loss() const {
  return num_masked > 0 ? mlm_loss_sum / static_cast<double>(num_masked) : 0.0;
}
double EvalResult::perplexity() const { return std::exp(mlm_loss()); }
double EvalResult::nsp_accuracy() const {
  return num_sentence_pairs > 0
             ? static_cast<double>(nsp_correct) / static_cast<double>(num_sentence_pairs)
             : 0.0;
}

nlohmann::json EvalResult::to_json() const {
  nlohmann::json json = {{"masked_accuracy", masked_accuracy()},
                         {"mlm_loss", mlm_loss()},
                         {"perplexity", perplexity()},
                         {"num_masked", num_masked},
                         {"sequences", sequences},
                         {"unigram_accuracy", unigram_accuracy()}};
  if (num_sentence_pairs > 0) json["nsp_accuracy"] = nsp_accuracy();
  if (rtd) json.update(rtd_counts.to_json(static_cast<double>(tokens), static_cast<double>(num_masked)));
  return json;
}

}  // namespace mlm::train

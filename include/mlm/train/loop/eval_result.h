#pragma once
// What an evaluation scored: counts summed over all ranks, and the figures derived from them.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/train/loop/rtd_counts.h"

namespace mlm::train {

struct EvalResult {
  int64_t num_masked = 0;     // selected positions scored, all ranks
  int64_t mlm_correct = 0;
  int64_t unigram_correct = 0;  // scored positions holding the most frequent scored token
  double mlm_loss_sum = 0;    // summed cross-entropy (nats)
  int64_t num_sentence_pairs = 0;  // NSP/SOP labels scored
  int64_t nsp_correct = 0;
  double nsp_loss_sum = 0;
  bool rtd = false;            // objective rtd: the mlm_* are the generator's, and
  RtdCounts rtd_counts;        //   the discriminator's counts over `tokens`
  int64_t tokens = 0;          // non-padding tokens scored
  int64_t sequences = 0;
  int64_t batches = 0;        // all ranks
  double seconds = 0;
  // A mixture of several sources: each source's masked accuracy (source_evaluation.h),
  // written as eval_mlm_accuracy/<source>.
  std::vector<std::pair<std::string, double>> source_accuracy;
  // eval.pll_* (train/likelihood/run_pll.h), scored on rank 0 after the counts above.
  std::optional<double> pseudo_perplexity, minimal_pair_accuracy;
  double pll_seconds = 0;

  double masked_accuracy() const;
  /// The unigram baseline: the accuracy of always predicting the most frequent token of the
  /// scored positions (an upper bound for any context-free guess).
  double unigram_accuracy() const;
  double mlm_loss() const;    // mean cross-entropy per masked token
  double perplexity() const;  // exp(mlm_loss)
  double nsp_accuracy() const;

  /// {masked_accuracy, mlm_loss, perplexity, num_masked, sequences, unigram_accuracy
  /// [, nsp_accuracy] [, RtdCounts::to_json]}.
  nlohmann::json to_json() const;
};

}  // namespace mlm::train

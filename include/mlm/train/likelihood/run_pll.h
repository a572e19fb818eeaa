#pragma once
// eval.pll_*: the pseudo-perplexity of a fixed set of sentences, and the accuracy on minimal
// pairs, at each evaluation of a run. The files are read and every sentence checked against
// the model's positions when the run starts; scoring runs on the rank that calls it, in fp32.
#include <optional>
#include <vector>

#include "mlm/config/sections/eval.h"
#include "mlm/train/likelihood/pll_corpus.h"

namespace mlm::train::likelihood {

struct RunPllScores {
  std::optional<double> pseudo_perplexity;      // with eval.pll_file
  std::optional<double> minimal_pair_accuracy;  // with eval.pll_minimal_pairs
  double seconds = 0;
};

class RunPll {
 public:
  /// nullopt when `eval` names no file. DataError naming file and line for a bad line or a
  /// sentence longer than the model's positions.
  static std::optional<RunPll> open(const config::EvalConfig& eval, model::MaskedLm model,
                                    const text::Tokenizer& tokenizer);
  RunPllScores score();

 private:
  RunPll(const config::EvalConfig& eval, model::MaskedLm model, const text::Tokenizer& tokenizer);

  config::EvalConfig eval_;
  PllVariant variant_;
  PllScorer scorer_;
  std::vector<Sentence> sentences_;
  std::vector<MinimalPair> pairs_;
};

}  // namespace mlm::train::likelihood

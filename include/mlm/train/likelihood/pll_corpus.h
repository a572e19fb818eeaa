#pragma once
// Pseudo-log-likelihoods of a file's sentences and minimal pairs (mlm-eval --pll /
// --minimal-pairs, eval.pll in a run). Every sentence is encoded and checked before any is
// scored: one longer than the model's positions is refused (DataError naming file and line).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/train/likelihood/pll_scorer.h"
#include "mlm/train/likelihood/stimuli.h"

namespace mlm::train::likelihood {

struct ScoredSentence {
  int64_t line = 0;
  SentenceScore score;
};

struct PllCorpusScore {
  std::vector<ScoredSentence> sentences;
  double log_prob = 0;  // summed over the sentences (nats)
  int64_t tokens = 0;   // targets scored
  double seconds = 0;
  /// Salazar et al. 2020: exp(-(sum of PLLs) / (targets scored)).
  double pseudo_perplexity() const;
  /// {variant, sentences, tokens, pseudo_log_likelihood, pseudo_perplexity, seconds,
  ///  sentences_per_s[, scores: [{line, pll, tokens}]]}
  nlohmann::json to_json(PllVariant variant, bool per_sentence) const;
};

struct PhenomenonCount {
  int64_t pairs = 0, correct = 0;
};

struct MinimalPairsScore {
  struct Pair {
    int64_t line = 0;
    double good = 0, bad = 0;  // PLLs
    bool correct() const { return good > bad; }  // a tie is a miss
  };
  std::vector<Pair> pairs;
  std::map<std::string, PhenomenonCount> phenomena;  // pairs without a phenomenon left out
  int64_t correct = 0;
  double seconds = 0;
  double accuracy() const;
  /// {variant, pairs, accuracy, phenomena: {name: {pairs, accuracy}}, seconds[, scores:
  ///  [{line, good, bad, correct}]]}
  nlohmann::json to_json(PllVariant variant, bool per_pair) const;
};

/// DataError naming `path` and the line for a sentence longer than the scorer's model holds
/// or without tokens: what the score_* functions check first.
void check_sentences(const PllScorer& scorer, const std::vector<Sentence>& sentences, const std::string& path);
void check_minimal_pairs(const PllScorer& scorer, const std::vector<MinimalPair>& pairs, const std::string& path);

/// `path` names the file in errors.
PllCorpusScore score_sentences(PllScorer& scorer, const std::vector<Sentence>& sentences, PllVariant variant,
                               const std::string& path);
MinimalPairsScore score_minimal_pairs(PllScorer& scorer, const std::vector<MinimalPair>& pairs, PllVariant variant,
                                      const std::string& path);

}  // namespace mlm::train::likelihood

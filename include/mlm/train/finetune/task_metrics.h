#pragma once
// The scores of a fine-tuned classifier, computed as scikit-learn and seqeval compute them:
// accuracy, macro-F1 over the labels present in gold or prediction, Matthews correlation
// (multi-class), F1 of one label (binary), entity-level F1 over BIO tags (seqeval's default,
// conlleval-style); and for regression, as scikit-learn and scipy: mean squared error, Pearson's
// r and Spearman's rho (average ranks for ties).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/task_config.h"

namespace mlm::train::finetune {

double accuracy(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted);
double macro_f1(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted);
double matthews(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted);
/// F1 of label `positive` (sklearn's f1_score with pos_label): 0 when it is neither predicted
/// nor gold.
double binary_f1(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted, int64_t positive);

double mean_squared_error(const std::vector<double>& gold, const std::vector<double>& predicted);
/// Pearson's r; 0 when either side is constant (undefined: scipy gives nan).
double pearson(const std::vector<double>& x, const std::vector<double>& y);
/// The ranks of `x` from 1, ties given the average of their ranks (scipy's rankdata "average").
std::vector<double> average_ranks(const std::vector<double>& x);
/// Spearman's rho: Pearson's r of the average ranks.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

/// An entity of a BIO sequence: its type and first and last word.
struct Span {
  std::string type;
  int64_t first = 0, last = 0;
  bool operator<(const Span& o) const;
};
/// The entities of one tag sequence ("O", "B-X", "I-X"): a span ends before an O, a B-, or an
/// I- of another type; an I- after an O or another type opens one.
std::vector<Span> bio_spans(const std::vector<std::string>& tags);
/// F1 of the predicted spans against the gold ones, over every sequence.
double span_f1(const std::vector<std::vector<std::string>>& gold, const std::vector<std::vector<std::string>>& predicted);

/// Gold and predicted labels of one evaluation, as label indices into the task's label set:
/// one per example (sequence tasks) or one per scored word, grouped by example (token tasks);
/// for regression, the gold and predicted values.
struct Predictions {
  std::vector<std::vector<int64_t>> gold, predicted;
  std::vector<double> gold_values, predicted_values;
};

/// The task's metric of `p`, and the others that apply, by name ("accuracy", ...).
struct TaskScores {
  double value = 0;  // the task's metric
  std::vector<std::pair<std::string, double>> all;
};
TaskScores score(const config::TaskSection& task, const Predictions& p);

}  // namespace mlm::train::finetune

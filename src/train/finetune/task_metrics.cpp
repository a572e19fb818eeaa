#include "mlm/train/finetune/task_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace mlm::train::finetune {
namespace {

std::set<int64_t> labels_present(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted) {
  std::set<int64_t> labels(gold.begin(), gold.end());
  labels.insert(predicted.begin(), predicted.end());
  return labels;
}

std::vector<int64_t> flatten(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<int64_t> out;
  for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

}  // namespace

double accuracy(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted) {
  if (gold.empty()) return 0;
  int64_t right = 0;
  for (size_t i = 0; i < gold.size(); ++i) right += gold[i] == predicted[i];
  return static_cast<double>(right) / static_cast<double>(gold.size());
}

double macro_f1(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted) {
  const auto labels = labels_present(gold, predicted);
  if (labels.empty()) return 0;
  double sum = 0;
  for (const auto c : labels) {
    int64_t tp = 0, fp = 0, fn = 0;
    for (size_t i = 0; i < gold.size(); ++i) {
      tp += gold[i] == c && predicted[i] == c;
      fp += gold[i] != c && predicted[i] == c;
      fn += gold[i] == c && predicted[i] != c;
    }
    sum += tp ? 2.0 * static_cast<double>(tp) / static_cast<double>(2 * tp + fp + fn) : 0.0;
  }
  return sum / static_cast<double>(labels.size());
}

double matthews(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted) {
  // Gorodkin's R_K from the confusion counts, as sklearn.metrics.matthews_corrcoef.
  const auto n = static_cast<double>(gold.size());
  std::map<int64_t, double> t, p;
  double correct = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    t[gold[i]] += 1;
    p[predicted[i]] += 1;
    correct += gold[i] == predicted[i];
  }
  double tp_sum = 0, pp = 0, tt = 0;
  for (const auto& [label, count] : t) tp_sum += count * (p.count(label) ? p[label] : 0.0);
  for (const auto& [label, count] : p) pp += count * count;
  for (const auto& [label, count] : t) tt += count * count;
  const double cov_yp = correct * n - tp_sum, cov_pp = n * n - pp, cov_yy = n * n - tt;
  return cov_yy > 0 && cov_pp > 0 ? cov_yp / std::sqrt(cov_yy * cov_pp) : 0.0;
}

double binary_f1(const std::vector<int64_t>& gold, const std::vector<int64_t>& predicted, int64_t positive) {
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < gold.size(); ++i) {
    tp += gold[i] == positive && predicted[i] == positive;
    fp += gold[i] != positive && predicted[i] == positive;
    fn += gold[i] == positive && predicted[i] != positive;
  }
  return tp ? 2.0 * static_cast<double>(tp) / static_cast<double>(2 * tp + fp + fn) : 0.0;
}

double mean_squared_error(const std::vector<double>& gold, const std::vector<double>& predicted) {
  if (gold.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < gold.size(); ++i) sum += (gold[i] - predicted[i]) * (gold[i] - predicted[i]);
  return sum / static_cast<double>(gold.size());
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<double>(x.size());
  if (x.empty()) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

std::vector<double> average_ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(x.size());
  for (size_t first = 0; first < order.size();) {
    size_t last = first;  // [first, last] hold one value
    while (last + 1 < order.size() && x[order[last + 1]] == x[order[first]]) ++last;
    const double rank = (static_cast<double>(first + last) / 2.0) + 1.0;
    for (size_t k = first; k <= last; ++k) ranks[order[k]] = rank;
    first = last + 1;
  }
  return ranks;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  return pearson(average_ranks(x), average_ranks(y));
}

bool Span::operator<(const Span& o) const { return std::tie(type, first, last) < std::tie(o.type, o.first, o.last); }

std::vector<Span> bio_spans(const std::vector<std::string>& tags) {
  std::vector<Span> spans;
  bool open = false;
  Span current;
  for (size_t i = 0; i <= tags.size(); ++i) {
    const std::string tag = i < tags.size() ? tags[i] : "O";
    const char prefix = tag == "O" || tag.size() < 2 || tag[1] != '-' ? 'O' : tag[0];
    const std::string type = prefix == 'O' ? "" : tag.substr(2);
    if (open && (prefix == 'O' || prefix == 'B' || type != current.type)) {
      current.last = static_cast<int64_t>(i) - 1;
      spans.push_back(current);
      open = false;
    }
    if ((prefix == 'B' || prefix == 'I') && !open) {
      current = {type, static_cast<int64_t>(i), static_cast<int64_t>(i)};
      open = true;
    }
  }
  return spans;
}

double span_f1(const std::vector<std::vector<std::string>>& gold, const std::vector<std::vector<std::string>>& predicted) {
  std::set<std::pair<size_t, Span>> g, p;
  for (size_t k = 0; k < gold.size(); ++k)
    for (const auto& s : bio_spans(gold[k])) g.insert({k, s});
  for (size_t k = 0; k < predicted.size(); ++k)
    for (const auto& s : bio_spans(predicted[k])) p.insert({k, s});
  int64_t tp = 0;
  for (const auto& s : p) tp += g.count(s);
  const double precision = p.empty() ? 0 : static_cast<double>(tp) / static_cast<double>(p.size());
  const double recall = g.empty() ? 0 : static_cast<double>(tp) / static_cast<double>(g.size());
  return precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
}

TaskScores score(const config::TaskSection& task, const Predictions& p) {
  TaskScores s;
  const auto gold = flatten(p.gold), predicted = flatten(p.predicted);
  if (task.kind == config::TaskKind::regression) {
    s.all = {{"mse", mean_squared_error(p.gold_values, p.predicted_values)},
             {"pearson", pearson(p.gold_values, p.predicted_values)},
             {"spearman", spearman(p.gold_values, p.predicted_values)}};
  } else if (task.kind == config::TaskKind::sequence_classification) {
    s.all = {{"accuracy", accuracy(gold, predicted)},
             {"macro_f1", macro_f1(gold, predicted)},
             {"matthews", matthews(gold, predicted)}};
    if (task.labels.size() == 2) {
      const auto positive = task.positive_label.empty() ? task.labels.begin() + 1
                                                        : std::find(task.labels.begin(), task.labels.end(),
                                                                    task.positive_label);
      s.all.emplace_back("binary_f1", binary_f1(gold, predicted, positive - task.labels.begin()));
    }
  } else {
    auto names = [&](const std::vector<std::vector<int64_t>>& rows) {
      std::vector<std::vector<std::string>> out;
      for (const auto& r : rows) {
        out.emplace_back();
        for (const auto label : r) out.back().push_back(task.labels[static_cast<size_t>(label)]);
      }
      return out;
    };
    s.all = {{"span_f1", span_f1(names(p.gold), names(p.predicted))}, {"accuracy", accuracy(gold, predicted)}};
  }
  for (const auto& [name, value] : s.all)
    if (name == config::to_string(task.metric)) s.value = value;
  return s;
}

}  // namespace mlm::train::finetune

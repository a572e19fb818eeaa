#include "mlm/train/loop/rtd_counts.h"

#include <cmath>

namespace mlm::train {
namespace {

double ratio(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

}  // namespace

RtdCounts RtdCounts::from(const double* v) {
  RtdCounts c;
  c.loss_sum = v[0];
  c.correct = v[1];
  c.true_positives = v[2];
  c.predicted = v[3];
  c.replaced = v[4];
  c.generator_hits = v[5];
  return c;
}

void RtdCounts::add(const RtdCounts& o) {
  loss_sum += o.loss_sum;
  correct += o.correct;
  true_positives += o.true_positives;
  predicted += o.predicted;
  replaced += o.replaced;
  generator_hits += o.generator_hits;
}

double RtdCounts::loss(double tokens) const { return ratio(loss_sum, tokens); }
double RtdCounts::accuracy(double tokens) const { return ratio(correct, tokens); }
double RtdCounts::precision() const { return ratio(true_positives, predicted); }
double RtdCounts::recall() const { return ratio(true_positives, replaced); }
double RtdCounts::f1() const { return ratio(2 * true_positives, predicted + replaced); }
double RtdCounts::generator_accuracy(double masked) const { return ratio(generator_hits, masked); }
double RtdCounts::replaced_share(double tokens) const { return ratio(replaced, tokens); }

double RtdCounts::prior_loss(double tokens) const {
  const double p = replaced_share(tokens);
  if (p <= 0 || p >= 1) return 0.0;
  return -(p * std::log(p) + (1 - p) * std::log1p(-p));
}

nlohmann::json RtdCounts::to_json(double tokens, double masked, const std::string& prefix) const {
  return {{prefix + "rtd_loss", loss(tokens)},          {prefix + "rtd_accuracy", accuracy(tokens)},
          {prefix + "rtd_precision", precision()},      {prefix + "rtd_recall", recall()},
          {prefix + "rtd_f1", f1()},                    {prefix + "generator_sample_accuracy", generator_accuracy(masked)},
          {prefix + "rtd_replaced_share", replaced_share(tokens)},
          {prefix + "rtd_prior_loss", prior_loss(tokens)}};
}

}  // namespace mlm::train

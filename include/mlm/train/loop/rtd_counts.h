#pragma once
// What replaced-token detection (objective rtd) counts, summed over micro-batches, ranks, a
// window of steps or an evaluation, and the figures derived from the sums: the discriminator's
// loss and accuracy per non-padding token, its precision, recall and F1 on the replaced class,
// the share of selected positions where the generator's sample was the original token
// (what makes the task easy or hard), and the share of tokens replaced with the loss of the
// prior (calling every token original at that share: a discriminator that learnt nothing scores
// it). No LibTorch here: the command-line mains print these.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace mlm::train {

struct RtdCounts {
  double loss_sum = 0;        // binary cross-entropy over non-padding tokens (nats)
  double correct = 0;         // tokens called right
  double true_positives = 0;  // replaced tokens called replaced
  double predicted = 0;       // tokens called replaced
  double replaced = 0;        // tokens replaced
  double generator_hits = 0;  // selected positions whose sample is the original token

  static constexpr int64_t kFields = 6;  // the fields above, in this order
  static RtdCounts from(const double* values);

  void add(const RtdCounts& other);

  double loss(double tokens) const;      // mean BCE per token
  double accuracy(double tokens) const;
  double precision() const;              // 0 when nothing was called replaced
  double recall() const;                 // 0 when nothing was replaced
  double f1() const;
  double generator_accuracy(double masked) const;
  double replaced_share(double tokens) const;
  double prior_loss(double tokens) const;  // the entropy of replaced_share (nats)

  /// {rtd_loss, rtd_accuracy, rtd_precision, rtd_recall, rtd_f1, generator_sample_accuracy,
  /// rtd_replaced_share, rtd_prior_loss}, each name after `prefix` ("eval_" in evaluation rows).
  nlohmann::json to_json(double tokens, double masked, const std::string& prefix = "") const;
};

}  // namespace mlm::train

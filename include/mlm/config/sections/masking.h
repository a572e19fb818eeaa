#pragma once
// The masking.* section: which tokens are selected and what they become.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>

#include "mlm/config/enums.h"

namespace mlm::config {

struct MaskingConfig {
  // The masking rate, one concept: the share of maskable tokens selected. Its keys keep
  // transformers' name (mlm_probability); in code it is the masking rate throughout
  // (MaskingRateSchedule, train::MaskingRate, set_masking_rate).
  double mlm_probability = 0.15;           // the masking rate (of the first step, if scheduled)
  double mask_replace_prob = 0.8;          // selected -> [MASK]
  double random_replace_prob = 0.1;        // selected -> random non-special token
  MaskingStrategy strategy = MaskingStrategy::token;  // token | whole_word | span
  MaskCount count = MaskCount::exact;      // exact (p*n in expectation) | bernoulli
  int64_t max_predictions_per_seq = 0;     // cap on selected positions (0 = none)
  double span_p = 0.2;                     // span: geometric parameter of span lengths
  int64_t max_span = 10;                   // span: longest span, in words
  MaskingRateSchedule rate_schedule = MaskingRateSchedule::constant;
                                           // constant | linear | cosine: the rate goes from
                                           // mlm_probability to
                                           // final_mlm_probability over the run (a phased
                                           // run: over each phase)
  double final_mlm_probability = 0.0;      // the rate at the schedule's end (not constant)

  template <class V>
  void visit(V& v) {
    v("mlm_probability", mlm_probability);
    v("mask_replace_prob", mask_replace_prob);
    v("random_replace_prob", random_replace_prob);
    v("strategy", strategy);
    v("count", count);
    v("max_predictions_per_seq", max_predictions_per_seq);
    v("span_p", span_p);
    v("max_span", max_span);
    v("rate_schedule", rate_schedule);
    v("final_mlm_probability", final_mlm_probability);
  }
};

}  // namespace mlm::config

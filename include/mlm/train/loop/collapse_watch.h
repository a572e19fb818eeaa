#pragma once
// Signs that a run has stopped learning what its objective asks, read from the figures it
// already counts: a discriminator that calls every token one class (ELECTRA's collapse to the
// prior: every token "original", RTD F1 0), and a masked LM that scores no better than always
// guessing the most frequent token. Training warns once per sign, naming the metric; mlm-eval
// reports both for the checkpoint it scores. No LibTorch here.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mlm/train/loop/eval_result.h"
#include "mlm/train/loop/rtd_counts.h"

namespace mlm::train {

/// Consecutive logged training windows past warm-up in which the discriminator called every
/// token one class before training warns (5 windows of logging.every_steps steps).
inline constexpr int64_t kOneClassWindows = 5;
/// Masked accuracy below this multiple of the unigram baseline counts as "at the baseline": a
/// model that only learned which tokens are frequent (filling every mask with "the . ,") scores
/// about the baseline; the shipped recipes are at twice it soon after warm-up.
inline constexpr double kUnigramBaselineMargin = 1.2;

/// "original" or "replaced" when the discriminator called every one of `tokens` scored tokens
/// that class; nullopt when it called both (or nothing was scored).
std::optional<std::string> one_class(const RtdCounts& counts, double tokens);

/// Whether `result`'s masked accuracy is within kUnigramBaselineMargin of its unigram baseline.
bool at_unigram_baseline(const EvalResult& result);

/// {"collapse_rtd_one_class": "original" | "replaced" | null (objective rtd only),
///  "collapse_mlm_at_unigram_baseline": bool}: what mlm-eval adds to its report.
nlohmann::json collapse_report(const EvalResult& result);

class CollapseWatch {
 public:
  explicit CollapseWatch(int64_t warmup_steps) : warmup_steps_(warmup_steps) {}

  /// A closed training window ending at `step` (objective rtd: its discriminator counts over
  /// `tokens`). Returns the warning the first time the discriminator has called one class in
  /// kOneClassWindows consecutive windows past warm-up.
  std::optional<std::string> window(const RtdCounts& rtd, double tokens, int64_t step);

  /// An evaluation at `step`. Returns the warning the first time, past warm-up, the masked
  /// accuracy sits at the unigram baseline, or the discriminator called one class.
  std::optional<std::string> evaluated(const EvalResult& result, int64_t step);

 private:
  std::optional<std::string> rtd_warning(const std::string& cls, const std::string& where);

  int64_t warmup_steps_;
  int64_t one_class_windows_ = 0;
  bool warned_rtd_ = false;
  bool warned_mlm_ = false;
};

}  // namespace mlm::train

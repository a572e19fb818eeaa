#include "mlm/train/loop/collapse_watch.h"

#include <fmt/format.h>

namespace mlm::train {

std::optional<std::string> one_class(const RtdCounts& counts, double tokens) {
  if (!(tokens > 0)) return std::nullopt;
  if (counts.predicted <= 0) return "original";
  if (counts.predicted >= tokens) return "replaced";
  return std::nullopt;
}

bool at_unigram_baseline(const EvalResult& result) {
  return result.num_masked > 0 &&
         result.masked_accuracy() < kUnigramBaselineMargin * result.unigram_accuracy();
}

nlohmann::json collapse_report(const EvalResult& result) {
  nlohmann::json report = {{"collapse_mlm_at_unigram_baseline", at_unigram_baseline(result)}};
  if (result.rtd) {
    const auto cls = one_class(result.rtd_counts, static_cast<double>(result.tokens));
    report["collapse_rtd_one_class"] = cls ? nlohmann::json(*cls) : nlohmann::json(nullptr);
  }
  return report;
}

std::optional<std::string> CollapseWatch::rtd_warning(const std::string& cls, const std::string& where) {
  if (warned_rtd_) return std::nullopt;
  warned_rtd_ = true;
  return fmt::format("replaced-token detection has collapsed: the discriminator called every token {} "
                     "{} (rtd_f1 {}); it learns nothing from here. ELECTRA recipes that leave the "
                     "prior: docs/ELECTRA.md",
                     cls, where, cls == "original" ? "0" : "at the replaced share");
}

std::optional<std::string> CollapseWatch::window(const RtdCounts& rtd, double tokens, int64_t step) {
  const auto cls = one_class(rtd, tokens);
  one_class_windows_ = cls && step > warmup_steps_ ? one_class_windows_ + 1 : 0;
  if (one_class_windows_ < kOneClassWindows) return std::nullopt;
  return rtd_warning(*cls, fmt::format("in the last {} logged windows (to step {})", kOneClassWindows, step));
}

std::optional<std::string> CollapseWatch::evaluated(const EvalResult& result, int64_t step) {
  if (step <= warmup_steps_) return std::nullopt;
  if (result.rtd) {
    if (const auto cls = one_class(result.rtd_counts, static_cast<double>(result.tokens))) {
      return rtd_warning(*cls, fmt::format("of the validation set at step {}", step));
    }
  }
  if (warned_mlm_ || !at_unigram_baseline(result)) return std::nullopt;
  warned_mlm_ = true;
  return fmt::format("masked-token accuracy sits at the unigram baseline past warm-up: eval_mlm_accuracy "
                     "{:.4f} against eval_unigram_accuracy {:.4f} at step {} (below {}x); the {} "
                     "fills masks with frequent tokens only. See docs/RECIPES.md on learning rate, "
                     "warm-up and pre-LN",
                     result.masked_accuracy(), result.unigram_accuracy(), step, kUnigramBaselineMargin,
                     result.rtd ? "generator" : "model");
}

}  // namespace mlm::train

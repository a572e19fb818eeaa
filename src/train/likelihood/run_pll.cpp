#include "mlm/train/likelihood/run_pll.h"

#include "mlm/util/elapsed.h"

namespace mlm::train::likelihood {

std::optional<RunPll> RunPll::open(const config::EvalConfig& eval, model::MaskedLm model,
                                   const text::Tokenizer& tokenizer) {
  if (eval.pll_file.empty() && eval.pll_minimal_pairs.empty()) return std::nullopt;
  return RunPll(eval, std::move(model), tokenizer);
}

RunPll::RunPll(const config::EvalConfig& eval, model::MaskedLm model, const text::Tokenizer& tokenizer)
    : eval_(eval), variant_(parse_pll_variant(eval.pll_variant, "eval.pll_variant")), scorer_(std::move(model), tokenizer) {
  if (!eval_.pll_file.empty()) {
    sentences_ = read_sentences(eval_.pll_file, eval_.pll_sentences);
    check_sentences(scorer_, sentences_, eval_.pll_file);
  }
  if (!eval_.pll_minimal_pairs.empty()) {
    pairs_ = read_minimal_pairs(eval_.pll_minimal_pairs, eval_.pll_sentences);
    check_minimal_pairs(scorer_, pairs_, eval_.pll_minimal_pairs);
  }
}

RunPllScores RunPll::score() {
  const auto start = SteadyClock::now();
  RunPllScores out;
  if (!sentences_.empty())
    out.pseudo_perplexity = score_sentences(scorer_, sentences_, variant_, eval_.pll_file).pseudo_perplexity();
  if (!pairs_.empty())
    out.minimal_pair_accuracy = score_minimal_pairs(scorer_, pairs_, variant_, eval_.pll_minimal_pairs).accuracy();
  out.seconds = seconds_since(start);
  return out;
}

}  // namespace mlm::train::likelihood

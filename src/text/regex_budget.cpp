#include "mlm/text/regex_budget.h"

#include <atomic>

namespace mlm::text {
namespace {

std::atomic<int32_t> step_limit{RegexBudget{}.step_limit};
std::atomic<int32_t> stack_limit_bytes{RegexBudget{}.stack_limit_bytes};

// Long patterns (llama-3's is ~100 bytes; a hostile one may be any size) are cut in the
// message so that it stays one readable line.
std::string quoted_pattern(const std::string& pattern) {
  constexpr size_t kShown = 160;
  if (pattern.size() <= kShown) return "'" + pattern + "'";
  return "'" + pattern.substr(0, kShown) + "...' (" + std::to_string(pattern.size()) + " bytes)";
}

}  // namespace

void set_regex_budget(const RegexBudget& budget) {
  step_limit = budget.step_limit;
  stack_limit_bytes = budget.stack_limit_bytes;
}

RegexBudget regex_budget() { return {step_limit.load(), stack_limit_bytes.load()}; }

RegexBudgetError RegexBudgetError::from_file(const std::string& file) const {
  Parts parts = parts_;
  parts.file = file;
  return RegexBudgetError(std::move(parts));
}

RegexBudgetError RegexBudgetError::at(const std::string& position) const {
  Parts parts = parts_;
  parts.position = position;
  return RegexBudgetError(std::move(parts));
}

std::string RegexBudgetError::message(const Parts& parts) {
  std::string m = parts.file.empty() ? "" : parts.file + ": ";
  m += "the pattern " + quoted_pattern(parts.pattern) + " " + parts.what_happened;
  if (!parts.position.empty()) m += " on the text at " + parts.position;
  m += " (a pattern that backtracks without bound: fix it, or raise tokenizer.regex_step_limit)";
  return m;
}

}  // namespace mlm::text

#pragma once
// The work one regular-expression match may do when the pattern comes from a file (a
// tokenizer.json's Split, Replace or Whitespace pattern). ICU's backtracking engine can take
// exponential time on a nested quantifier, so every match runs under ICU's time and stack
// limits; a match that runs over stops the run with RegexBudgetError, never hangs it.
//
// The step limit is in ICU's own "time limit" units: one unit is 10,000 steps of the match
// engine, about 0.1-0.3 ms of a modern core. It counts steps, not seconds, so the same pattern
// on the same text stops at the same point on every machine, busy or idle.
#include <cstdint>
#include <string>

#include "mlm/util/errors.h"

namespace mlm::text {

struct RegexBudget {
  /// Units of 10,000 ICU match-engine steps one match (one find) may take; 0 turns the limit
  /// off. The largest any shipped-like pipeline takes on real text is 0 units
  /// (docs/RELIABILITY.md, "Regular expressions").
  int32_t step_limit = 1000;
  /// Bytes of ICU's backtracking stack one match may grow (ICU's own default is 8 MB).
  int32_t stack_limit_bytes = 8 << 20;
};

/// The budget every file-given pattern runs under. Process-wide, like the log level: the
/// commands set it once from tokenizer.regex_step_limit when they load the config.
void set_regex_budget(const RegexBudget& budget);
RegexBudget regex_budget();

/// A pattern ran over its budget (or ICU stopped it for another reason) on some text. The
/// layers that know more add it: the tokenizer its file, the corpus reader the position.
/// Exit code 2 (a DataError: the input, not the program, is at fault).
class RegexBudgetError : public DataError {
 public:
  RegexBudgetError(std::string pattern, std::string what_happened)
      : RegexBudgetError(Parts{std::move(pattern), std::move(what_happened), {}, {}}) {}

  /// The same error, naming the file the pattern came from.
  RegexBudgetError from_file(const std::string& file) const;
  /// The same error, naming where in the corpus (or other input) the text was.
  RegexBudgetError at(const std::string& position) const;

  const std::string& pattern() const { return parts_.pattern; }

 private:
  struct Parts {
    std::string pattern, what_happened, file, position;
  };
  explicit RegexBudgetError(Parts parts) : DataError(message(parts)), parts_(std::move(parts)) {}
  static std::string message(const Parts& parts);

  Parts parts_;
};

}  // namespace mlm::text

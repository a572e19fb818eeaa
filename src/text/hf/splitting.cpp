#include "splitting.h"

#include <unicode/regex.h>
#include <unicode/utext.h>

#include <atomic>
#include <stdexcept>
#include <unordered_map>

#include "mlm/text/regex_budget.h"

namespace mlm::text::hf {

void split_spans(std::string_view text, bool at_text_start, std::vector<Span>& spans,
                 SplitBehavior behavior, bool invert, Pieces& out) {
  if (invert) {
    for (auto& s : spans) s.is_match = !s.is_match;
  }
  auto emit = [&](uint32_t begin, uint32_t end) {
    out.add(text.substr(begin, end - begin), at_text_start && begin == 0);
  };
  // As NormalizedString::split folds its matches (tokenizers/src/tokenizer/normalizer.rs).
  switch (behavior) {
    case SplitBehavior::removed:
      for (const auto& s : spans) {
        if (!s.is_match) emit(s.begin, s.end);
      }
      return;
    case SplitBehavior::isolated:
      for (const auto& s : spans) emit(s.begin, s.end);
      return;
    case SplitBehavior::contiguous:
    case SplitBehavior::merged_with_previous: {
      // A span joins the previous piece when it is a match after a gap (merged with
      // previous), or when it has the previous span's kind (contiguous).
      std::vector<Span> merged;
      bool previous_match = false;
      for (const auto& s : spans) {
        const bool join = behavior == SplitBehavior::contiguous ? s.is_match == previous_match
                                                                : s.is_match && !previous_match;
        if (join && !merged.empty()) {
          merged.back().end = s.end;
        } else {
          merged.push_back(s);
        }
        previous_match = s.is_match;
      }
      for (const auto& s : merged) emit(s.begin, s.end);
      return;
    }
    case SplitBehavior::merged_with_next: {
      std::vector<Span> merged;  // built backwards
      bool previous_match = false;
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !merged.empty()) {
          merged.back().begin = it->begin;
        } else {
          merged.push_back(*it);
        }
        previous_match = it->is_match;
      }
      for (auto it = merged.rbegin(); it != merged.rend(); ++it) emit(it->begin, it->end);
      return;
    }
  }
}

void literal_spans(std::string_view text, std::string_view literal, std::vector<Span>& out) {
  out.clear();
  uint32_t last = 0;
  if (!literal.empty()) {
    for (size_t at = text.find(literal); at != std::string_view::npos;
         at = text.find(literal, at + literal.size())) {
      if (last < at) out.push_back({last, static_cast<uint32_t>(at), false});
      out.push_back({static_cast<uint32_t>(at), static_cast<uint32_t>(at + literal.size()), true});
      last = static_cast<uint32_t>(at + literal.size());
    }
  }
  if (last < text.size() || text.empty()) out.push_back({last, static_cast<uint32_t>(text.size()), false});
}

SplitBehavior split_behavior_from(const std::string& name, bool* ok) {
  *ok = true;
  if (name == "Removed") return SplitBehavior::removed;
  if (name == "Isolated") return SplitBehavior::isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::merged_with_previous;
  if (name == "MergedWithNext") return SplitBehavior::merged_with_next;
  if (name == "Contiguous") return SplitBehavior::contiguous;
  *ok = false;
  return SplitBehavior::isolated;
}

// Oniguruma's classes under UTF-8 (doc/RE; regenc.c): \s is 0009-000D, 0085 and the Z
// categories; \w is Alphabetic, M, Nd and Pc (Unicode's Word less Join_Control), but below
// U+0100 its Latin-1 table decides, which also counts ² ³ ¹ ¼ ½ ¾ as word characters; \d is Nd
// (0-9 below U+0100). ICU's own \s lacks U+000B and U+0085, its \w the Latin-1 numbers.
// The Rust regex crate (the Whitespace pre-tokenizer's) follows UTS #18: \s is White_Space,
// \w is Alphabetic, M, Nd, Pc and Join_Control.
std::string onig_to_icu_pattern(const std::string& pattern, RegexDialect dialect) {
  const bool onig = dialect == RegexDialect::oniguruma;
  const char* kSpace = onig ? "\\t-\\r\\x{85}\\p{Z}" : "\\p{White_Space}";
  const char* kWord = onig ? "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}"
                           : "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
  const char* kDigit = "\\p{Nd}";
  std::string out;
  int class_depth = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[i + 1];
      const char* set = (e == 's' || e == 'S') ? kSpace : (e == 'w' || e == 'W') ? kWord
                        : (e == 'd' || e == 'D') ? kDigit : nullptr;
      if (set) {
        const bool negated = e == 'S' || e == 'W' || e == 'D';
        if (class_depth == 0) {
          out += negated ? "[^" : "[";
          out += set;
          out += "]";
        } else {
          out += negated ? "[^" : "[";  // a nested set: ICU supports [a[^b]]
          out += set;
          out += "]";
        }
      } else {
        out += c;
        out += e;
      }
      ++i;
      continue;
    }
    if (c == '[') ++class_depth;
    if (c == ']' && class_depth > 0) --class_depth;
    out += c;
  }
  return out;
}

struct OnigRegex::Impl {
  std::string source;  // as the file gave it, for errors
  std::unique_ptr<icu::RegexPattern> pattern;
  uint64_t serial;  // names the pattern in the per-thread matcher cache (an address may be reused)
};

namespace splitting_detail {

std::atomic<uint64_t> next_serial{1};

// A RegexMatcher is not thread-safe and costs an allocation to make: each thread keeps one
// per pattern.
icu::RegexMatcher& thread_matcher(const icu::RegexPattern& pattern, uint64_t serial) {
  thread_local std::unordered_map<uint64_t, std::unique_ptr<icu::RegexMatcher>> matchers;
  auto& matcher = matchers[serial];
  if (!matcher) {
    UErrorCode status = U_ZERO_ERROR;
    matcher.reset(pattern.matcher(status));
    if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU regex matcher: ") + u_errorName(status));
  }
  return *matcher;
}

// ICU's own time limit counts from the matcher's reset, so over a long text it would add up
// the work of every match before; the budget is per match. ICU calls this once per unit of
// 10,000 steps while it matches; spans() zeroes the count before each find().
struct MatchClock {
  int32_t units = 0;  // units of the current find()
  int32_t limit = 0;  // units one find() may take; 0: no limit
};

UBool on_time_unit(const void* context, int32_t /*units since the reset*/) {
  auto* clock = static_cast<MatchClock*>(const_cast<void*>(context));
  return clock->limit == 0 || ++clock->units < clock->limit;
}

// Why ICU stopped a match, in the words of RegexBudgetError.
std::string stop_reason(UErrorCode status, const RegexBudget& budget) {
  if (status == U_REGEX_STOPPED_BY_CALLER) {
    return "ran over its step budget (" + std::to_string(budget.step_limit) +
           " units of 10,000 ICU steps in one match, tokenizer.regex_step_limit)";
  }
  if (status == U_REGEX_STACK_OVERFLOW) {
    return "ran over its backtracking stack (" + std::to_string(budget.stack_limit_bytes >> 10) + " KB)";
  }
  return std::string("was stopped by ICU (") + u_errorName(status) + ")";
}

}  // namespace splitting_detail

OnigRegex::OnigRegex(const std::string& pattern, RegexDialect dialect) : impl_(std::make_unique<Impl>()) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError parse_error;
  impl_->pattern.reset(icu::RegexPattern::compile(
      icu::UnicodeString::fromUTF8(onig_to_icu_pattern(pattern, dialect)), 0, parse_error, status));
  impl_->source = pattern;
  impl_->serial = splitting_detail::next_serial++;
  if (U_FAILURE(status)) {
    throw std::invalid_argument(std::string("the regex does not compile (") + u_errorName(status) +
                                " at offset " + std::to_string(parse_error.offset) + ")");
  }
}

OnigRegex::~OnigRegex() = default;

void OnigRegex::spans(std::string_view text, std::vector<Span>& out) const {
  out.clear();
  UErrorCode status = U_ZERO_ERROR;
  UText utext = UTEXT_INITIALIZER;
  utext_openUTF8(&utext, text.data(), static_cast<int64_t>(text.size()), &status);
  icu::RegexMatcher& matcher = splitting_detail::thread_matcher(*impl_->pattern, impl_->serial);
  // Set on every call: the budget may have changed since the matcher was made.
  const RegexBudget budget = regex_budget();
  splitting_detail::MatchClock clock;
  clock.limit = budget.step_limit;
  matcher.setMatchCallback(splitting_detail::on_time_unit, &clock, status);
  matcher.setStackLimit(budget.stack_limit_bytes, status);
  matcher.reset(&utext);
  uint32_t last = 0;
  for (;;) {
    clock.units = 0;
    if (!matcher.find(status) || U_FAILURE(status)) break;
    const auto begin = static_cast<uint32_t>(matcher.start64(status));
    const auto end = static_cast<uint32_t>(matcher.end64(status));
    // An empty match stays a (dropped) match: it still cuts the gap around it, as in onig.
    if (last < begin) out.push_back({last, begin, false});
    out.push_back({begin, end, true});
    last = end;
  }
  utext_close(&utext);
  // find() returns false both at the end and when ICU gives up: the second must not pass
  // for "no more matches", which would tokenize the rest of the text as one gap.
  if (U_FAILURE(status)) throw RegexBudgetError(impl_->source, splitting_detail::stop_reason(status, budget));
  if (last < text.size() || text.empty()) out.push_back({last, static_cast<uint32_t>(text.size()), false});
}

}  // namespace mlm::text::hf

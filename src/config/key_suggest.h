#pragma once
// "Did you mean ...?" for misspelled keys, sections and enum values: the closest known
// spelling within a typo's reach (edit distance with transpositions).
#include <string>
#include <string_view>
#include <vector>

namespace mlm::config::detail {

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// two neighbouring characters each cost 1 ("learnig" -> "learning" is 1).
size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is within max(1, min(3, |word| / 4)) edits,
/// else "". Ties go to the earlier candidate.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

/// Suggestion for an unknown top-level name (`dotted` without a dot) or dotted key: the
/// closest section or key; failing that a key with the same or a near leaf name in another
/// section ("model.learning_rate" -> "optim.learning_rate"). "" when nothing is close.
std::string suggest_key(const std::string& dotted, const std::vector<std::string>& sections,
                        const std::vector<std::string>& keys);

}  // namespace mlm::config::detail

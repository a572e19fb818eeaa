#include "key_suggest.h"

#include <algorithm>

namespace mlm::config::detail {
namespace {

std::string leaf_of(const std::string& dotted) {
  const auto dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows: the swap rule looks two rows back.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t reach = std::max<size_t>(1, std::min<size_t>(3, word.size() / 4));
  std::string best;
  size_t best_distance = reach + 1;
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string suggest_key(const std::string& dotted, const std::vector<std::string>& sections,
                        const std::vector<std::string>& keys) {
  const bool is_section = dotted.find('.') == std::string::npos;
  if (auto near = closest_match(dotted, is_section ? sections : keys); !near.empty()) return near;

  // The right key under the wrong section (or at the top level): match on the leaf.
  const std::string leaf = leaf_of(dotted);
  std::vector<std::string> leaves;
  leaves.reserve(keys.size());
  for (const auto& key : keys) leaves.push_back(leaf_of(key));
  for (size_t i = 0; i < keys.size(); ++i) {
    if (leaves[i] == leaf) return keys[i];
  }
  if (auto near = closest_match(leaf, leaves); !near.empty()) {
    return keys[std::find(leaves.begin(), leaves.end(), near) - leaves.begin()];
  }
  return {};
}

}  // namespace mlm::config::detail

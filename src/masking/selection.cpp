#include "mlm/masking/selection.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mlm::masking {
namespace {

int32_t length(const Word& w) { return w.end - w.begin; }

/// The "at least one" rule when no word fit the budget: a uniformly random word within the
/// hard limit (scanning on from a random start), or -1 when none is short enough.
int64_t fallback_word(const MaskableSequence& seq, const SelectionBudget& budget,
                      MaskingRng& rng) {
  const auto count = static_cast<int64_t>(seq.words.size());
  if (!budget.at_least_one || count == 0) return -1;
  const auto start = static_cast<int64_t>(rng.below(static_cast<uint64_t>(count)));
  for (int64_t k = 0; k < count; ++k) {
    const int64_t w = (start + k) % count;
    if (length(seq.words[w]) <= budget.limit) return w;
  }
  return -1;
}

void sort_by_begin(std::vector<MaskedSpan>& spans) {
  std::sort(spans.begin(), spans.end(),
            [](const MaskedSpan& a, const MaskedSpan& b) { return a.begin < b.begin; });
}

}  // namespace

MaskableSequence find_maskable(const std::vector<int32_t>& ids, const text::VocabInfo& vocab) {
  MaskableSequence seq;
  seq.positions.reserve(ids.size());
  bool in_run = false;
  int32_t run = -1;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t id = ids[i];
    const bool maskable = id != vocab.ids.pad && !vocab.is_special[static_cast<size_t>(id)];
    if (!maskable) {
      in_run = false;
      continue;
    }
    const auto pos = static_cast<int32_t>(i);
    seq.positions.push_back(pos);
    if (!in_run) {
      // A piece after a special token starts a word even without the marker: words never
      // cross special tokens.
      ++run;
      in_run = true;
      seq.words.push_back({pos, pos + 1, run});
    } else if (vocab.starts_word[static_cast<size_t>(id)]) {
      seq.words.push_back({pos, pos + 1, run});
    } else {
      seq.words.back().end = pos + 1;
    }
  }
  return seq;
}

SelectionBudget draw_budget(int64_t n, const config::MaskingConfig& cfg, MaskingRng& rng) {
  SelectionBudget budget;
  const double p = cfg.mlm_probability;
  int64_t tokens = 0;
  if (cfg.count == config::MaskCount::exact) {
    const double expected = p * static_cast<double>(n);
    const double whole = std::floor(expected);
    tokens = static_cast<int64_t>(whole) + (rng.bernoulli(expected - whole) ? 1 : 0);
    budget.at_least_one = n >= 1;
    if (budget.at_least_one) tokens = std::max<int64_t>(tokens, 1);
  } else {
    for (int64_t i = 0; i < n; ++i) tokens += rng.bernoulli(p) ? 1 : 0;
  }
  if (cfg.max_predictions_per_seq > 0) budget.limit = cfg.max_predictions_per_seq;
  budget.tokens = std::min({tokens, budget.limit, n});
  return budget;
}

std::vector<MaskedSpan> select_tokens(const MaskableSequence& seq, const SelectionBudget& budget,
                                      MaskingRng& rng) {
  std::vector<int32_t> pool = seq.positions;
  const auto n = static_cast<int64_t>(pool.size());
  const int64_t k = std::min(budget.tokens, n);
  // Partial Fisher-Yates: the first k entries are a uniform k-subset.
  for (int64_t i = 0; i < k; ++i) {
    const auto j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(n - i)));
    std::swap(pool[i], pool[j]);
  }
  std::sort(pool.begin(), pool.begin() + k);
  std::vector<MaskedSpan> spans;
  spans.reserve(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) spans.push_back({pool[i], pool[i] + 1, 1, 1});
  return spans;
}

std::vector<MaskedSpan> select_whole_words(const MaskableSequence& seq,
                                           const SelectionBudget& budget, MaskingRng& rng) {
  const auto count = static_cast<int64_t>(seq.words.size());
  std::vector<int32_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::vector<MaskedSpan> spans;
  int64_t covered = 0;
  // Shuffle lazily: position i of the random order is fixed only when it is looked at.
  for (int64_t i = 0; i < count && covered < budget.tokens; ++i) {
    const auto j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(count - i)));
    std::swap(order[i], order[j]);
    const Word& word = seq.words[order[i]];
    if (covered + length(word) > budget.tokens) continue;  // overshoots: try the others
    covered += length(word);
    spans.push_back({word.begin, word.end, 1, 1});
  }
  if (spans.empty()) {
    const int64_t w = fallback_word(seq, budget, rng);
    if (w >= 0) spans.push_back({seq.words[w].begin, seq.words[w].end, 1, 1});
  }
  sort_by_begin(spans);
  return spans;
}

std::vector<MaskedSpan> select_spans(const MaskableSequence& seq, const SelectionBudget& budget,
                                     const SpanLengthDistribution& lengths, MaskingRng& rng) {
  const auto& words = seq.words;
  const auto count = static_cast<int64_t>(words.size());
  std::vector<uint8_t> taken(static_cast<size_t>(count), 0);
  std::vector<int32_t> anchors(static_cast<size_t>(count));  // candidates, pruned lazily
  std::iota(anchors.begin(), anchors.end(), 0);
  std::vector<MaskedSpan> spans;
  int64_t covered = 0;
  while (covered < budget.tokens && !anchors.empty()) {
    const auto c = static_cast<size_t>(rng.below(anchors.size()));
    const int32_t anchor = anchors[c];
    anchors[c] = anchors.back();
    anchors.pop_back();
    // The remaining budget only shrinks, so an anchor that does not fit never will.
    if (taken[anchor] || length(words[anchor]) > budget.tokens - covered) continue;
    const auto wanted = static_cast<int32_t>(lengths.sample(rng));
    int32_t taken_words = 0;
    int32_t w = anchor;
    while (taken_words < wanted && w < count && words[w].run == words[anchor].run &&
           !taken[w] && length(words[w]) <= budget.tokens - covered) {
      taken[w] = 1;
      covered += length(words[w]);
      ++taken_words;
      ++w;
    }
    spans.push_back({words[anchor].begin, words[w - 1].end, taken_words, wanted});
  }
  if (spans.empty()) {
    const int64_t w = fallback_word(seq, budget, rng);
    if (w >= 0) {
      const auto wanted = static_cast<int32_t>(lengths.sample(rng));
      spans.push_back({words[w].begin, words[w].end, 1, wanted});
    }
  }
  sort_by_begin(spans);
  return spans;
}

}  // namespace mlm::masking

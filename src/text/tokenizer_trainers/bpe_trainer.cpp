// The trainer keeps the library's data structures where they decide the result: the pair
// counts, the set of words each queue entry will visit, and a binary max-heap whose pop and
// push move elements as Rust's BinaryHeap does (libstdc++'s heap algorithms do the same), so
// stale entries and repeated merges fall out as they do there.
#include "mlm/text/tokenizer_trainers/bpe_trainer.h"

#include <algorithm>
#include <unordered_map>

#include "mlm/util/utf8_decode.h"

namespace mlm::text::tokenizer_trainers {
namespace {

using Pair = uint64_t;  // (first id << 32) | second id: compares as the library's (u32, u32)

Pair make_pair_key(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }
uint32_t first_of(Pair p) { return static_cast<uint32_t>(p >> 32); }
uint32_t second_of(Pair p) { return static_cast<uint32_t>(p); }

struct QueuedMerge {
  Pair pair;
  uint64_t count;
  std::vector<uint32_t> words;  // indices of the words to visit (sorted, unique)
};

// The library's Ord: higher count first, then the smaller pair.
struct MergeLess {
  bool operator()(const QueuedMerge& a, const QueuedMerge& b) const {
    if (a.count != b.count) return a.count < b.count;
    return a.pair > b.pair;
  }
};

struct PairHash {
  size_t operator()(Pair p) const { return static_cast<size_t>((p ^ (p >> 29)) * 0x9E3779B97F4A7C15ull); }
};

// The code point of one UTF-8 character (valid: the corpus reader repairs the text).
char32_t code_point(std::string_view c) {
  size_t i = 0;
  return next_code_point(c, i);
}

// The characters of a UTF-8 word, each as its own string.
std::vector<std::string_view> characters(std::string_view word) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < word.size();) {
    const size_t begin = i;
    next_code_point(word, i);
    out.push_back(word.substr(begin, i - begin));
  }
  return out;
}

class Vocabulary {
 public:
  uint32_t add(const std::string& piece) {
    auto [it, added] = ids_.emplace(piece, static_cast<uint32_t>(pieces_.size()));
    if (added) pieces_.push_back(piece);
    return it->second;
  }
  std::optional<uint32_t> find(std::string_view piece) const {
    auto it = ids_.find(piece);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const { return pieces_.size(); }
  const std::string& piece(uint32_t id) const { return pieces_[id]; }
  std::vector<std::string> release() { return std::move(pieces_); }

 private:
  std::unordered_map<std::string, uint32_t, WordHash, std::equal_to<>> ids_;
  std::vector<std::string> pieces_;
};

// The alphabet: every character of the words with its count, the initial alphabet counted as
// "always", the least frequent dropped beyond limit_alphabet, the rest in code point order.
void add_alphabet(const WordCounts& words, const BpeTrainerOptions& options, Vocabulary& vocab) {
  std::unordered_map<std::string, uint64_t> counts;
  for (const auto& [word, count] : words) {
    for (auto c : characters(word)) counts[std::string(c)] += count;
  }
  for (const auto& c : options.initial_alphabet) counts[c] = UINT64_MAX;
  std::vector<std::pair<std::string, uint64_t>> kept(counts.begin(), counts.end());
  if (options.limit_alphabet && kept.size() > *options.limit_alphabet) {
    // The library sorts by count alone (unstably); ties here go in code point order.
    std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : code_point(a.first) < code_point(b.first);
    });
    kept.erase(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(kept.size() - *options.limit_alphabet));
  }
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return code_point(a.first) < code_point(b.first); });
  for (const auto& [c, count] : kept) vocab.add(c);
}

// A word as symbol ids; merge() is the library's Word::merge.
struct Word {
  std::vector<uint32_t> symbols;

  // Replaces each (a, b) left to right by `replacement`; `changes` gets the pair count deltas.
  void merge(uint32_t a, uint32_t b, uint32_t replacement, std::vector<std::pair<Pair, int>>& changes) {
    std::vector<uint32_t>& s = symbols;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != a || i + 1 >= s.size() || s[i + 1] != b) continue;
      if (i > 0) {
        changes.emplace_back(make_pair_key(s[i - 1], a), -1);
        changes.emplace_back(make_pair_key(s[i - 1], replacement), 1);
      }
      s[i] = replacement;
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      if (i + 1 < s.size()) {
        changes.emplace_back(make_pair_key(b, s[i + 1]), -1);
        changes.emplace_back(make_pair_key(replacement, s[i + 1]), 1);
      }
    }
  }
};

}  // namespace

BpeModel train_bpe(const WordCounts& word_counts, const BpeTrainerOptions& options) {
  Vocabulary vocab;
  for (const auto& token : options.special_tokens) vocab.add(token);
  add_alphabet(word_counts, options, vocab);

  // Words in byte order: the ids of prefixed characters ("##a") are given in this order (the
  // library's follow its hash map, which differs from run to run).
  std::vector<const WordCounts::value_type*> sorted;
  sorted.reserve(word_counts.size());
  for (const auto& entry : word_counts) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->first < b->first; });

  const std::string& prefix = options.continuing_subword_prefix;
  std::vector<Word> words(sorted.size());
  std::vector<int64_t> counts(sorted.size());
  for (size_t w = 0; w < sorted.size(); ++w) {
    counts[w] = static_cast<int64_t>(sorted[w]->second);
    bool first = true;
    for (auto c : characters(sorted[w]->first)) {
      if (!vocab.find(c)) continue;  // dropped from the alphabet
      const uint32_t id = (first || prefix.empty()) ? *vocab.find(c) : vocab.add(prefix + std::string(c));
      words[w].symbols.push_back(id);
      first = false;
    }
  }

  std::unordered_map<Pair, int64_t, PairHash> pair_counts;
  std::unordered_map<Pair, std::vector<uint32_t>, PairHash> where;
  for (uint32_t w = 0; w < words.size(); ++w) {
    const auto& s = words[w].symbols;
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      const Pair p = make_pair_key(s[i], s[i + 1]);
      pair_counts[p] += counts[w];
      auto& at = where[p];
      if (at.empty() || at.back() != w) at.push_back(w);
    }
  }
  std::vector<QueuedMerge> queue;
  queue.reserve(where.size());
  const auto push_where = [&] {
    for (auto& [pair, at] : where) {
      const int64_t count = pair_counts[pair];
      if (count <= 0) continue;
      std::sort(at.begin(), at.end());
      at.erase(std::unique(at.begin(), at.end()), at.end());
      queue.push_back({pair, static_cast<uint64_t>(count), std::move(at)});
      std::push_heap(queue.begin(), queue.end(), MergeLess{});
    }
    where.clear();
  };
  push_where();

  std::vector<std::pair<Pair, uint32_t>> merges;
  std::vector<std::pair<Pair, int>> changes;
  const size_t vocab_size = static_cast<size_t>(std::max<int64_t>(0, options.vocab_size));
  while (vocab.size() < vocab_size && !queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), MergeLess{});
    QueuedMerge top = std::move(queue.back());
    queue.pop_back();
    const int64_t now = pair_counts[top.pair];
    if (top.count != static_cast<uint64_t>(now)) {
      top.count = static_cast<uint64_t>(now);
      queue.push_back(std::move(top));
      std::push_heap(queue.begin(), queue.end(), MergeLess{});
      continue;
    }
    if (top.count < 1 || options.min_frequency > top.count) break;

    const uint32_t a = first_of(top.pair), b = second_of(top.pair);
    std::string_view part_b = vocab.piece(b);
    if (!prefix.empty() && part_b.substr(0, prefix.size()) == prefix) part_b.remove_prefix(prefix.size());
    const uint32_t id = vocab.add(vocab.piece(a) + std::string(part_b));
    merges.emplace_back(top.pair, id);

    for (const uint32_t w : top.words) {
      changes.clear();
      words[w].merge(a, b, id, changes);
      for (const auto& [pair, change] : changes) {
        pair_counts[pair] += change * counts[w];
        if (change > 0) where[pair].push_back(w);
      }
    }
    push_where();
  }

  // The model keeps one rank per pair: a pair merged twice keeps its last (the library's
  // merges map is built from the list in order).
  std::unordered_map<Pair, size_t, PairHash> last;
  for (size_t r = 0; r < merges.size(); ++r) last[merges[r].first] = r;
  BpeModel model;
  for (size_t r = 0; r < merges.size(); ++r) {
    if (last[merges[r].first] != r) continue;
    model.merges.emplace_back(vocab.piece(first_of(merges[r].first)), vocab.piece(second_of(merges[r].first)));
  }
  model.vocab = vocab.release();
  return model;
}

}  // namespace mlm::text::tokenizer_trainers

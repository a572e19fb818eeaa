// tokenizers' BPE model (tokenizers/src/models/bpe/): characters (or their <0xXX> byte
// pieces, or the unknown piece) merged pair by pair, the lowest-ranked merge first and the
// leftmost among equals, over a linked list of symbols with a priority queue of candidate
// merges. Words seen before come from a cache.
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <unordered_map>

#include "components.h"
#include "unicode_chars.h"
#include "vocabulary.h"

namespace mlm::text::hf {
namespace bpe_detail {

struct MergeResult {
  uint32_t rank;
  int32_t id;
};

inline uint64_t pair_key(int32_t a, int32_t b) {
  return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
}

struct Symbol {
  int32_t id;
  int32_t prev, next;  // -1 at either end
  bool removed;
};

struct Candidate {
  uint32_t rank;
  int32_t pos;
  int32_t id;
  bool operator<(const Candidate& o) const {  // the queue's top: lowest rank, then leftmost
    return rank != o.rank ? rank > o.rank : pos > o.pos;
  }
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

class Bpe : public Model {
 public:
  Bpe(const JsonReader& json) : vocab_(Vocabulary::from_object(json)) {
    if (json.has("dropout") && json.number_or("dropout", 0.0) != 0.0) {
      json.fail("dropout is not supported (it makes encoding random); set it to null", "dropout");
    }
    if (const auto unk = json.optional_string("unk_token")) {
      unk_id_ = vocab_.find(*unk);
      if (!unk_id_) json.fail("'" + *unk + "' is not in the vocabulary", "unk_token");
    }
    prefix_ = json.string_or("continuing_subword_prefix", "");
    suffix_ = json.string_or("end_of_word_suffix", "");
    fuse_unk_ = json.boolean_or("fuse_unk", false);
    byte_fallback_ = json.boolean_or("byte_fallback", false);
    ignore_merges_ = json.boolean_or("ignore_merges", false);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      byte_ids_[b] = vocab_.find(name).value_or(-1);
    }
    read_merges(json);
  }

  const std::vector<std::string>& pieces() const override { return vocab_.pieces(); }
  std::optional<int32_t> piece_to_id(std::string_view piece) const override { return vocab_.find(piece); }
  std::optional<bool> piece_starts_word(std::string_view piece) const override {
    if (prefix_.empty()) return std::nullopt;
    return piece.substr(0, prefix_.size()) != prefix_;
  }
  std::optional<int32_t> unk_id() const override { return unk_id_; }

  void tokenize(std::string_view word, std::vector<int32_t>& out) const override {
    if (word.empty()) return;
    if (ignore_merges_) {
      if (auto id = vocab_.find(word)) {
        out.push_back(*id);
        return;
      }
    }
    {
      std::shared_lock lock(cache_mutex_);
      const auto it = cache_.find(word);
      if (it != cache_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        return;
      }
    }
    const size_t before = out.size();
    merge_word(word, out);
    std::unique_lock lock(cache_mutex_, std::try_to_lock);
    if (lock.owns_lock() && cache_.size() < kCacheCapacity && word.size() < kCacheMaxWordBytes) {
      cache_.emplace(std::string(word), std::vector<int32_t>(out.begin() + before, out.end()));
    }
  }

 private:
  // The library's defaults: a whole text (Metaspace without split) is not kept.
  static constexpr size_t kCacheCapacity = 10000;
  static constexpr size_t kCacheMaxWordBytes = 256;

  void read_merges(const JsonReader& json) {
    const auto merges = json.array("merges");
    merges_.reserve(merges.size());
    std::string merged;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
      const auto& m = merges[rank].json();
      std::string a, b;
      if (m.is_string()) {  // "a b", the format before tokenizers 0.20
        const auto text = m.get<std::string>();
        const size_t space = text.find(' ');
        if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
          merges[rank].fail("expected two pieces separated by one space, got " + m.dump());
        }
        a = text.substr(0, space);
        b = text.substr(space + 1);
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        a = m[0].get<std::string>();
        b = m[1].get<std::string>();
      } else {
        merges[rank].fail("expected \"a b\" or [\"a\", \"b\"], got " + m.dump());
      }
      const auto a_id = vocab_.find(a), b_id = vocab_.find(b);
      if (!a_id) merges[rank].fail("'" + a + "' is not in the vocabulary");
      if (!b_id) merges[rank].fail("'" + b + "' is not in the vocabulary");
      // The merged piece drops the right part's continuation prefix (the library cuts its
      // length off whether or not the piece starts with it).
      merged = a + b.substr(std::min(prefix_.size(), b.size()));
      const auto id = vocab_.find(merged);
      if (!id) merges[rank].fail("the merged piece '" + merged + "' is not in the vocabulary");
      merges_[pair_key(*a_id, *b_id)] = {static_cast<uint32_t>(rank), *id};
    }
  }

  const MergeResult* find_merge(int32_t a, int32_t b) const {
    const auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

  // BPE::merge_word: the initial symbols, then Word::merge_all.
  void merge_word(std::string_view word, std::vector<int32_t>& out) const {
    thread_local std::vector<Symbol> symbols;
    thread_local std::string affixed;
    symbols.clear();
    auto add = [&](int32_t id) {
      const auto n = static_cast<int32_t>(symbols.size());
      symbols.push_back({id, n - 1, -1, false});
      if (n > 0) symbols[n - 1].next = n;
    };
    bool pending_unk = false;
    for (size_t i = 0; i < word.size();) {
      const size_t begin = i;
      i += std::min(utf8_lead_length(static_cast<uint8_t>(word[i])), word.size() - i);
      std::string_view s = word.substr(begin, i - begin);
      if ((begin > 0 && !prefix_.empty()) || (i == word.size() && !suffix_.empty())) {
        affixed.assign(begin > 0 ? prefix_ : std::string());
        affixed.append(s);
        if (i == word.size()) affixed.append(suffix_);
        s = affixed;
      }
      if (const auto id = vocab_.find(s)) {
        if (pending_unk) add(*unk_id_);
        pending_unk = false;
        add(*id);
        continue;
      }
      if (byte_fallback_ && std::all_of(s.begin(), s.end(), [&](char c) { return byte_ids_[uint8_t(c)] >= 0; })) {
        for (char c : s) add(byte_ids_[uint8_t(c)]);  // before a pending unknown, as the library
        continue;
      }
      if (!unk_id_) continue;  // no unknown piece: the character is dropped
      if (pending_unk && !fuse_unk_) add(*unk_id_);
      pending_unk = true;
    }
    if (pending_unk) add(*unk_id_);
    merge_all(symbols);
    for (const auto& s : symbols) {
      if (!s.removed) out.push_back(s.id);
    }
  }

  void merge_all(std::vector<Symbol>& symbols) const {
    thread_local std::vector<Candidate> heap_storage;
    heap_storage.clear();
    std::priority_queue<Candidate, std::vector<Candidate>> queue(std::less<Candidate>(), std::move(heap_storage));
    for (size_t k = 0; k + 1 < symbols.size(); ++k) {
      if (const auto* m = find_merge(symbols[k].id, symbols[k + 1].id)) {
        queue.push({m->rank, static_cast<int32_t>(k), m->id});
      }
    }
    while (!queue.empty()) {
      const Candidate top = queue.top();
      queue.pop();
      Symbol& left = symbols[top.pos];
      if (left.removed || left.next < 0) continue;
      Symbol& right = symbols[left.next];
      const auto* m = find_merge(left.id, right.id);
      if (!m || m->id != top.id) continue;  // a stale candidate
      left.id = top.id;
      right.removed = true;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = top.pos;
      if (left.prev >= 0) {
        if (const auto* pm = find_merge(symbols[left.prev].id, left.id)) queue.push({pm->rank, left.prev, pm->id});
      }
      if (left.next >= 0) {
        if (const auto* nm = find_merge(left.id, symbols[left.next].id)) queue.push({nm->rank, top.pos, nm->id});
      }
    }
  }

  Vocabulary vocab_;
  std::unordered_map<uint64_t, MergeResult> merges_;
  std::optional<int32_t> unk_id_;
  std::string prefix_, suffix_;
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  int32_t byte_ids_[256];
  mutable std::shared_mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace bpe_detail

std::unique_ptr<Model> make_bpe(const JsonReader& json) { return std::make_unique<bpe_detail::Bpe>(json); }

}  // namespace mlm::text::hf

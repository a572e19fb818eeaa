// tokenizers' Unigram model (tokenizers/src/models/unigram/model.rs, encode_optimized): the
// Viterbi path over every vocabulary piece that matches (a trie walk from each character),
// an unknown character scoring min(score) - 10; consecutive unknowns fused; an unknown
// stretch becomes its <0xXX> byte pieces when byte_fallback has them all.
#include <cmath>
#include <limits>

#include "components.h"
#include "unicode_chars.h"
#include "vocabulary.h"

namespace mlm::text::hf {
namespace unigram_detail {

constexpr double kUnkPenalty = 10.0;

// A byte trie over the pieces: one hash lookup per byte, so a walk stops at the first byte
// no piece continues with.
class PieceTrie {
 public:
  void insert(std::string_view key, int32_t id) {
    int32_t node = 0;
    for (char c : key) {
      const uint64_t edge = (uint64_t(node) << 8) | uint8_t(c);
      auto it = edges_.find(edge);
      if (it == edges_.end()) {
        it = edges_.emplace(edge, static_cast<int32_t>(terminal_.size())).first;
        terminal_.push_back(-1);
      }
      node = it->second;
    }
    terminal_[node] = id;
  }
  /// Calls f(id, length) for every piece that is a prefix of `text`, shortest first.
  template <class F>
  void prefixes(std::string_view text, F&& f) const {
    int32_t node = 0;
    for (size_t k = 0; k < text.size(); ++k) {
      const auto it = edges_.find((uint64_t(node) << 8) | uint8_t(text[k]));
      if (it == edges_.end()) return;
      node = it->second;
      if (terminal_[node] >= 0) f(terminal_[node], k + 1);
    }
  }

 private:
  std::unordered_map<uint64_t, int32_t> edges_;
  std::vector<int32_t> terminal_{-1};  // node 0 is the root
};

class Unigram : public Model {
 public:
  Unigram(const JsonReader& json) {
    const auto entries = json.array("vocab");
    std::vector<std::string> pieces;
    pieces.reserve(entries.size());
    scores_.reserve(entries.size());
    for (const auto& e : entries) {
      const auto& v = e.json();
      if (!v.is_array() || v.size() != 2 || !v[0].is_string() || !v[1].is_number()) {
        e.fail("expected [piece, score], got " + v.dump());
      }
      pieces.push_back(v[0].get<std::string>());
      scores_.push_back(v[1].get<double>());
    }
    vocab_ = Vocabulary::from_pieces(std::move(pieces), json);
    if (json.has("unk_id")) {
      const int64_t unk = json.integer("unk_id");
      if (unk < 0 || unk >= int64_t(scores_.size())) json.fail("out of the vocabulary's range", "unk_id");
      unk_id_ = static_cast<int32_t>(unk);
    }
    byte_fallback_ = json.boolean_or("byte_fallback", false);
    min_score_ = std::numeric_limits<double>::infinity();
    for (double s : scores_) min_score_ = std::min(min_score_, s);
    for (size_t id = 0; id < vocab_.pieces().size(); ++id) {
      // The library's trie holds every piece; a repeated one maps to its last id.
      trie_.insert(vocab_.pieces()[id], *vocab_.find(vocab_.pieces()[id]));
    }
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      byte_ids_[b] = vocab_.find(name).value_or(-1);
    }
  }

  const std::vector<std::string>& pieces() const override { return vocab_.pieces(); }
  std::optional<int32_t> piece_to_id(std::string_view piece) const override { return vocab_.find(piece); }
  std::optional<int32_t> unk_id() const override { return unk_id_; }

  void tokenize(std::string_view text, std::vector<int32_t>& out) const override {
    if (text.empty()) return;
    struct Node {
      int32_t id = -1;
      int32_t starts_at = -1;  // -1: no path ends here yet
      double score = 0;
    };
    thread_local std::vector<Node> best;
    best.assign(text.size() + 1, Node{});
    best[0].starts_at = 0;  // the empty path; its score 0 is all that is read
    const double unk_score = min_score_ - kUnkPenalty;
    for (size_t start = 0; start < text.size();) {
      const double here = best[start].score;
      const size_t char_bytes = std::min(utf8_lead_length(static_cast<uint8_t>(text[start])), text.size() - start);
      bool single_char_piece = false;
      trie_.prefixes(text.substr(start), [&](int32_t id, size_t length) {
        Node& target = best[start + length];
        const double candidate = here + scores_[id];
        if (target.starts_at < 0 || candidate > target.score) {
          target = {id, static_cast<int32_t>(start), candidate};
        }
        if (length == char_bytes) single_char_piece = true;
      });
      if (!single_char_piece) {
        if (!unk_id_) throw std::runtime_error("Unigram: a character has no piece and the model has no unk_id");
        Node& target = best[start + char_bytes];
        const double candidate = here + unk_score;
        if (target.starts_at < 0 || candidate > target.score) {
          target = {*unk_id_, static_cast<int32_t>(start), candidate};
        }
      }
      start += char_bytes;
    }
    // Back from the end; unknown stretches fused (fuse_unk is always on for Unigram).
    thread_local std::vector<std::pair<uint32_t, uint32_t>> spans;  // [begin, end), reversed
    spans.clear();
    bool last_unk = false;
    for (size_t end = text.size(); end > 0;) {
      const Node& node = best[end];
      const bool unk = unk_id_ && node.id == *unk_id_;
      if (unk && last_unk) {
        spans.back().first = node.starts_at;
      } else {
        spans.push_back({static_cast<uint32_t>(node.starts_at), static_cast<uint32_t>(end)});
      }
      last_unk = unk;
      end = node.starts_at;
    }
    for (size_t k = spans.size(); k-- > 0;) {
      const std::string_view piece = text.substr(spans[k].first, spans[k].second - spans[k].first);
      // The library looks each result string up again: a fused unknown stretch is not a piece.
      const auto id = vocab_.find(piece);
      if (id) {
        out.push_back(*id);
        continue;
      }
      if (byte_fallback_ && std::all_of(piece.begin(), piece.end(), [&](char c) { return byte_ids_[uint8_t(c)] >= 0; })) {
        for (char c : piece) out.push_back(byte_ids_[uint8_t(c)]);
        continue;
      }
      out.push_back(*unk_id_);
    }
  }

 private:
  Vocabulary vocab_;
  std::vector<double> scores_;
  std::optional<int32_t> unk_id_;
  bool byte_fallback_ = false;
  double min_score_ = 0;
  PieceTrie trie_;
  int32_t byte_ids_[256];
};

}  // namespace unigram_detail

std::unique_ptr<Model> make_unigram(const JsonReader& json) { return std::make_unique<unigram_detail::Unigram>(json); }

}  // namespace mlm::text::hf

#pragma once
// A model's pieces by id and ids by piece, read from a tokenizer.json "vocab" (an object
// piece → id for BPE and WordPiece; Unigram lists [piece, score] pairs by id).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json_reader.h"

namespace mlm::text::hf {

/// The largest id a tokenizer of `entries` pieces (vocabulary and added tokens) may use. Ids
/// may leave holes (a few hub files skip some), but every id up to the largest is a row of
/// each per-id table, so one far id in a damaged file would size tables for nothing (id 2e9:
/// 64 GB of empty pieces). Twice the entries plus 1024 leaves room for any real file's holes
/// and keeps the tables linear in the file's size; never past int32, the ids' type.
inline int64_t largest_id_for(size_t entries) {
  return std::min<int64_t>(INT32_MAX, static_cast<int64_t>(entries) * 2 + 1023);
}

class Vocabulary {
 public:
  /// From {"piece": id, ...}: DataError naming the key and the piece for a negative or
  /// repeated id, or one past largest_id_for the entries.
  static Vocabulary from_object(const JsonReader& model);
  /// From pieces in id order.
  static Vocabulary from_pieces(std::vector<std::string> pieces, const JsonReader& model);

  Vocabulary() = default;
  // The index points into pieces_: moving is fine (the heap buffers move), copying is not.
  Vocabulary(Vocabulary&&) = default;
  Vocabulary& operator=(Vocabulary&&) = default;

  const std::vector<std::string>& pieces() const { return pieces_; }
  std::optional<int32_t> find(std::string_view piece) const {
    const auto it = index_.find(piece);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  size_t max_piece_bytes() const { return max_piece_bytes_; }

 private:
  std::vector<std::string> pieces_;
  std::unordered_map<std::string_view, int32_t> index_;
  size_t max_piece_bytes_ = 0;
};

}  // namespace mlm::text::hf

#pragma once
// A model's pieces by id and ids by piece, read from a tokenizer.json "vocab" (an object
// piece → id for BPE and WordPiece; Unigram lists [piece, score] pairs by id).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "json_reader.h"

namespace mlm::text::hf {

class Vocabulary {
 public:
  /// From {"piece": id, ...}: DataError naming the key for a negative or repeated id.
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

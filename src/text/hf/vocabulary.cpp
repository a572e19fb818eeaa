#include "vocabulary.h"

namespace mlm::text::hf {

Vocabulary Vocabulary::from_object(const JsonReader& model) {
  const JsonReader vocab = model.at("vocab");
  if (!vocab.json().is_object()) vocab.fail("expected an object piece → id");
  std::vector<std::pair<std::string, int64_t>> entries;
  const int64_t largest = largest_id_for(vocab.json().size());
  int64_t max_id = -1;
  for (const auto& [piece, id] : vocab.json().items()) {
    if (!id.is_number_integer() || (id.is_number_unsigned() && id.get<uint64_t>() > INT32_MAX) ||
        id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      vocab.fail("the id of '" + piece + "' is not a non-negative 32-bit integer (" + id.dump() + ")");
    }
    if (id.get<int64_t>() > largest) {
      vocab.fail("the id of '" + piece + "' (" + id.dump() + ") is far beyond the vocabulary's " +
                 std::to_string(vocab.json().size()) + " entries (ids up to " + std::to_string(largest) +
                 " are accepted)");
    }
    entries.emplace_back(piece, id.get<int64_t>());
    max_id = std::max(max_id, id.get<int64_t>());
  }
  Vocabulary out;
  out.pieces_.resize(static_cast<size_t>(max_id + 1));
  std::vector<uint8_t> seen(out.pieces_.size());
  for (auto& [piece, id] : entries) {
    if (seen[id]++) vocab.fail("id " + std::to_string(id) + " is given to two pieces");
    out.pieces_[id] = std::move(piece);
  }
  out.index_.reserve(out.pieces_.size());
  for (size_t id = 0; id < out.pieces_.size(); ++id) {
    if (!seen[id]) continue;
    out.index_.emplace(out.pieces_[id], static_cast<int32_t>(id));
    out.max_piece_bytes_ = std::max(out.max_piece_bytes_, out.pieces_[id].size());
  }
  return out;
}

Vocabulary Vocabulary::from_pieces(std::vector<std::string> pieces, const JsonReader& model) {
  Vocabulary out;
  out.pieces_ = std::move(pieces);
  out.index_.reserve(out.pieces_.size());
  for (size_t id = 0; id < out.pieces_.size(); ++id) {
    // A repeated piece keeps its last id, as the library's HashMap does.
    out.index_[out.pieces_[id]] = static_cast<int32_t>(id);
    out.max_piece_bytes_ = std::max(out.max_piece_bytes_, out.pieces_[id].size());
  }
  return out;
}

}  // namespace mlm::text::hf

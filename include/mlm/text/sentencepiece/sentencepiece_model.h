#pragma once
// The parts of a sentencepiece ModelProto (sentencepiece_model.proto) that decide how text is
// encoded, read straight from the serialized bytes: no protobuf library (LibTorch and
// sentencepiece each bring their own, see spm_bridge.h). Fields absent from the bytes keep
// the proto2 defaults written below.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlm::text {

struct SentencePieceModel {
  enum class PieceType : int { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };
  enum class Algorithm : int { unigram = 1, bpe = 2, word = 3, character = 4 };

  struct Piece {
    std::string text;  // the piece, U+2581 marking a space
    float score = 0.0f;
    PieceType type = PieceType::normal;
  };

  std::vector<Piece> pieces;  // ModelProto.pieces (1), in id order

  // ModelProto.trainer_spec (2)
  Algorithm algorithm = Algorithm::unigram;  // model_type (3)
  bool byte_fallback = false;                // (35)
  int32_t unk_id = 0;                        // (40)
  bool treat_whitespace_as_suffix = false;   // (24)

  // ModelProto.normalizer_spec (3)
  std::string normalizer_name;            // name (1): nmt_nfkc, nmt_nfkc_cf, identity, ...
  std::string precompiled_charsmap;       // (2): sentencepiece's normalization trie and table
  bool add_dummy_prefix = true;           // (3)
  bool remove_extra_whitespaces = true;   // (4)
  bool escape_whitespaces = true;         // (5)
};

/// Reads a serialized ModelProto. DataError naming `origin` and the byte offset when the
/// bytes are not a well-formed message (truncated, bad wire type, bad field).
SentencePieceModel parse_sentencepiece_model(std::string_view bytes, const std::string& origin);

}  // namespace mlm::text

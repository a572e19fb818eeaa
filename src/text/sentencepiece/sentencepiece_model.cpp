#include "mlm/text/sentencepiece/sentencepiece_model.h"

#include <bit>

#include "protobuf_wire.h"

namespace mlm::text {
namespace {

// Field numbers of sentencepiece_model.proto.
constexpr uint32_t kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3;
constexpr uint32_t kPieceText = 1, kPieceScore = 2, kPieceType = 3;
constexpr uint32_t kModelType = 3, kTreatWhitespaceAsSuffix = 24, kByteFallback = 35, kUnkId = 40;
constexpr uint32_t kNormalizerName = 1, kCharsmap = 2, kAddDummyPrefix = 3,
                   kRemoveExtraWhitespaces = 4, kEscapeWhitespaces = 5;

// A field of the expected wire type, else DataError at the field.
void expect_type(const WireReader& reader, const WireField& field, uint32_t wire_type,
                 const char* name) {
  if (field.wire_type != wire_type) {
    reader.fail(field.offset, std::string(name) + " has wire type " +
                                        std::to_string(field.wire_type) + ", expected " +
                                        std::to_string(wire_type));
  }
}

SentencePieceModel::Piece read_piece(WireReader reader) {
  SentencePieceModel::Piece piece;
  WireField f;
  while (reader.next(f)) {
    if (f.number == kPieceText) {
      expect_type(reader, f, 2, "piece");
      piece.text = std::string(f.bytes);
    } else if (f.number == kPieceScore) {
      expect_type(reader, f, 5, "score");
      piece.score = std::bit_cast<float>(f.fixed32);
    } else if (f.number == kPieceType) {
      expect_type(reader, f, 0, "type");
      if (f.varint < 1 || f.varint > 6) {
        reader.fail(f.offset, "piece type " + std::to_string(f.varint) + " is not 1..6");
      }
      piece.type = static_cast<SentencePieceModel::PieceType>(f.varint);
    }
  }
  return piece;
}

void read_trainer_spec(WireReader reader, SentencePieceModel& model) {
  WireField f;
  while (reader.next(f)) {
    if (f.number == kModelType) {
      expect_type(reader, f, 0, "trainer_spec.model_type");
      model.algorithm = static_cast<SentencePieceModel::Algorithm>(f.varint);
    } else if (f.number == kByteFallback) {
      expect_type(reader, f, 0, "trainer_spec.byte_fallback");
      model.byte_fallback = f.varint != 0;
    } else if (f.number == kUnkId) {
      expect_type(reader, f, 0, "trainer_spec.unk_id");
      model.unk_id = static_cast<int32_t>(f.varint);
    } else if (f.number == kTreatWhitespaceAsSuffix) {
      expect_type(reader, f, 0, "trainer_spec.treat_whitespace_as_suffix");
      model.treat_whitespace_as_suffix = f.varint != 0;
    }
  }
}

void read_normalizer_spec(WireReader reader, SentencePieceModel& model) {
  WireField f;
  while (reader.next(f)) {
    if (f.number == kNormalizerName) {
      expect_type(reader, f, 2, "normalizer_spec.name");
      model.normalizer_name = std::string(f.bytes);
    } else if (f.number == kCharsmap) {
      expect_type(reader, f, 2, "normalizer_spec.precompiled_charsmap");
      model.precompiled_charsmap = std::string(f.bytes);
    } else if (f.number == kAddDummyPrefix) {
      expect_type(reader, f, 0, "normalizer_spec.add_dummy_prefix");
      model.add_dummy_prefix = f.varint != 0;
    } else if (f.number == kRemoveExtraWhitespaces) {
      expect_type(reader, f, 0, "normalizer_spec.remove_extra_whitespaces");
      model.remove_extra_whitespaces = f.varint != 0;
    } else if (f.number == kEscapeWhitespaces) {
      expect_type(reader, f, 0, "normalizer_spec.escape_whitespaces");
      model.escape_whitespaces = f.varint != 0;
    }
  }
}

}  // namespace

SentencePieceModel parse_sentencepiece_model(std::string_view bytes, const std::string& origin) {
  SentencePieceModel model;
  WireReader reader(bytes, origin);
  WireField f;
  while (reader.next(f)) {
    if (f.number == kPieces) {
      expect_type(reader, f, 2, "pieces");
      model.pieces.push_back(read_piece(reader.nested(f)));
    } else if (f.number == kTrainerSpec) {
      expect_type(reader, f, 2, "trainer_spec");
      read_trainer_spec(reader.nested(f), model);
    } else if (f.number == kNormalizerSpec) {
      expect_type(reader, f, 2, "normalizer_spec");
      read_normalizer_spec(reader.nested(f), model);
    }
  }
  if (model.pieces.empty()) reader.fail(bytes.size(), "no pieces");
  return model;
}

}  // namespace mlm::text

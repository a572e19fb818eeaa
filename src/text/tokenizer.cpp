#include "mlm/text/tokenizer.h"

#include <sentencepiece_processor.h>

#include <fstream>
#include <sstream>

#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"

namespace mlm::text {
namespace {

// Encoding cost and memory grow with the input; longer texts go through in pieces of this
// size, cut at whitespace so the ids are the same as for one call.
constexpr size_t kEncodePieceBytes = 64 * 1024;

bool starts_with_word_marker(const std::string& piece) {
  return piece.size() >= 3 && piece.compare(0, 3, "\xE2\x96\x81") == 0;
}

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError("tokenizer model '" + path + "' cannot be read");
  std::stringstream bytes;
  bytes << in.rdbuf();
  Tokenizer t = from_serialized(bytes.str(), path);
  t.path_ = path;
  return t;
}

Tokenizer Tokenizer::from_serialized(const std::string& model_proto, const std::string& origin) {
  auto processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->LoadFromSerializedProto(model_proto);
  if (!status.ok()) {
    throw DataError("tokenizer model '" + origin + "' is not a sentencepiece model: " +
                    status.ToString());
  }
  Tokenizer t;
  t.processor_ = std::move(processor);
  t.serialized_ = model_proto;
  t.init(origin);
  return t;
}

void Tokenizer::init(const std::string& origin) {
  const auto& sp = *processor_;
  std::string missing;
  int32_t ids[5];
  for (int k = 0; k < 5; ++k) {
    const int id = sp.PieceToId(kSpecialPieces[k]);
    // PieceToId answers unk_id for an unknown piece: check the piece really is there.
    if (id < 0 || sp.IdToPiece(id) != kSpecialPieces[k]) {
      missing += missing.empty() ? "" : ", ";
      missing += kSpecialPieces[k];
    }
    ids[k] = id;
  }
  if (!missing.empty()) {
    throw DataError("tokenizer model '" + origin + "' lacks the special pieces " + missing +
                    " (train it with mlm-tokenizer, which adds [PAD] [UNK] [CLS] [SEP] [MASK])");
  }
  if (sp.unk_id() != ids[1]) {
    throw DataError("tokenizer model '" + origin + "': its unknown piece is '" +
                    sp.IdToPiece(sp.unk_id()) + "', expected [UNK]");
  }
  vocab_.size = sp.GetPieceSize();
  vocab_.ids = SpecialIds{ids[0], ids[1], ids[2], ids[3], ids[4]};
  vocab_.is_special.assign(static_cast<size_t>(vocab_.size), 0);
  vocab_.starts_word.assign(static_cast<size_t>(vocab_.size), 0);
  for (int i = 0; i < vocab_.size; ++i) {
    vocab_.is_special[i] = sp.IsControl(i) || sp.IsUnused(i) || sp.IsUnknown(i);
    vocab_.starts_word[i] = starts_with_word_marker(sp.IdToPiece(i));
  }
  for (int32_t id : ids) vocab_.is_special[id] = 1;
}

void Tokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  out.clear();
  std::vector<int> piece_ids;
  while (!text.empty()) {
    const size_t cut = cut_point(text, kEncodePieceBytes);
    // Encode() replaces its output: the first piece goes straight into `out`.
    const auto status = processor_->Encode(text.substr(0, cut), out.empty() ? &out : &piece_ids);
    if (!status.ok()) throw DataError("tokenizer: encoding failed: " + status.ToString());
    if (!piece_ids.empty()) {
      out.insert(out.end(), piece_ids.begin(), piece_ids.end());
      piece_ids.clear();
    }
    text.remove_prefix(cut);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  encode(text, ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  const auto status = processor_->Decode(ids, &text);
  if (!status.ok()) throw DataError("tokenizer: decoding failed: " + status.ToString());
  return text;
}

std::string Tokenizer::id_to_piece(int32_t id) const { return processor_->IdToPiece(id); }

}  // namespace mlm::text

#include "mlm/text/tokenizer.h"

#include <fstream>
#include <sstream>

#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "spm_library.h"

namespace mlm::text {
namespace {

// Encoding cost and memory grow with the input; longer texts go through in pieces of this
// size, cut at whitespace so the ids are the same as for one call.
constexpr size_t kEncodePieceBytes = 64 * 1024;

void append_bytes(void* context, const char* data, size_t size) {
  static_cast<std::string*>(context)->append(data, size);
}

void append_ids(void* context, const int32_t* ids, size_t size) {
  auto* out = static_cast<std::vector<int32_t>*>(context);
  out->insert(out->end(), ids, ids + size);
}

std::string piece_of(const void* processor, int id) {
  std::string piece;
  spm_api().id_to_piece(processor, id, append_bytes, &piece);
  return piece;
}

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
  const MlmSpmApi& api = spm_api();
  char error[512] = {};
  void* processor = api.load(model_proto.data(), model_proto.size(), error, sizeof error);
  if (!processor) {
    throw DataError("tokenizer model '" + origin + "' is not a sentencepiece model: " + error);
  }
  Tokenizer t;
  t.processor_ = std::shared_ptr<void>(processor, api.release);
  t.serialized_ = model_proto;
  t.init(origin);
  return t;
}

void Tokenizer::init(const std::string& origin) {
  const MlmSpmApi& api = spm_api();
  const void* sp = processor_.get();
  std::string missing;
  int32_t ids[5];
  for (int k = 0; k < 5; ++k) {
    const std::string_view name = kSpecialPieces[k];
    const int id = api.piece_to_id(sp, name.data(), name.size());
    // piece_to_id answers unk_id for an unknown piece: check the piece really is there.
    if (id < 0 || piece_of(sp, id) != name) {
      missing += missing.empty() ? "" : ", ";
      missing += kSpecialPieces[k];
    }
    ids[k] = id;
  }
  if (!missing.empty()) {
    throw DataError("tokenizer model '" + origin + "' lacks the special pieces " + missing +
                    " (train it with mlm-tokenizer, which adds [PAD] [UNK] [CLS] [SEP] [MASK])");
  }
  if (api.unk_id(sp) != ids[1]) {
    throw DataError("tokenizer model '" + origin + "': its unknown piece is '" +
                    piece_of(sp, api.unk_id(sp)) + "', expected [UNK]");
  }
  vocab_.size = api.piece_size(sp);
  vocab_.ids = SpecialIds{ids[0], ids[1], ids[2], ids[3], ids[4]};
  vocab_.is_special.assign(static_cast<size_t>(vocab_.size), 0);
  vocab_.starts_word.assign(static_cast<size_t>(vocab_.size), 0);
  for (int i = 0; i < vocab_.size; ++i) {
    const unsigned flags = api.piece_flags(sp, i);
    vocab_.is_special[i] = (flags & (kMlmSpmControl | kMlmSpmUnused | kMlmSpmUnknown)) != 0;
    vocab_.starts_word[i] = starts_with_word_marker(piece_of(sp, i));
  }
  for (int32_t id : ids) vocab_.is_special[id] = 1;
}

void Tokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  out.clear();
  const MlmSpmApi& api = spm_api();
  char error[512] = {};
  while (!text.empty()) {
    const size_t cut = cut_point(text, kEncodePieceBytes);
    if (!api.encode(processor_.get(), text.data(), cut, append_ids, &out, error, sizeof error)) {
      throw DataError(std::string("tokenizer: encoding failed: ") + error);
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
  char error[512] = {};
  if (!spm_api().decode(processor_.get(), ids.data(), ids.size(), append_bytes, &text, error,
                        sizeof error)) {
    throw DataError(std::string("tokenizer: decoding failed: ") + error);
  }
  return text;
}

std::string Tokenizer::id_to_piece(int32_t id) const { return piece_of(processor_.get(), id); }

}  // namespace mlm::text

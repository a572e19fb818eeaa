#include "mlm/util/errors.h"
#include "mlm/text/utf8.h"
#include "spm_library.h"
#include "../tokenizer_model.h"

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

class SentencePieceProcessor final : public TokenizerModel {
 public:
  /// `added_mask_id`: the id of a [MASK] added after the model's pieces (DeBERTa's), else -1.
  SentencePieceProcessor(void* processor, int32_t added_mask_id)
      : processor_(processor, spm_api().release), added_mask_id_(added_mask_id) {}

  TokenizerKind kind() const override { return TokenizerKind::sentencepiece; }

  void encode(std::string_view text, std::vector<int32_t>& out) const override {
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

  std::string decode(const std::vector<int32_t>& ids) const override {
    // An added [MASK] is no piece of the model: the runs between them are decoded, it shows as itself.
    std::string text;
    auto run = ids.begin();
    for (auto it = ids.begin();; ++it) {
      if (it != ids.end() && *it != added_mask_id_) continue;
      text += decode_pieces(std::vector<int32_t>(run, it));
      if (it == ids.end()) break;
      text += kSpecialPieces[4];
      run = it + 1;
    }
    return text;
  }

  std::string id_to_piece(int32_t id) const override {
    return id == added_mask_id_ ? kSpecialPieces[4] : piece_of(processor_.get(), id);
  }

  const void* processor() const { return processor_.get(); }

 private:
  std::string decode_pieces(const std::vector<int32_t>& ids) const {
    std::string text;
    char error[512] = {};
    if (!ids.empty() && !spm_api().decode(processor_.get(), ids.data(), ids.size(), append_bytes, &text, error,
                                          sizeof error)) {
      throw DataError(std::string("tokenizer: decoding failed: ") + error);
    }
    return text;
  }

  std::shared_ptr<void> processor_;  // a sentencepiece processor inside the bridge
  int32_t added_mask_id_;
};

}  // namespace

OpenedModel open_sentencepiece(const std::string& model_proto, const std::string& origin) {
  const MlmSpmApi& api = spm_api();
  char error[512] = {};
  void* processor = api.load(model_proto.data(), model_proto.size(), error, sizeof error);
  if (!processor) {
    throw DataError("tokenizer model '" + origin + "' is not a sentencepiece model: " + error);
  }
  // piece_to_id answers unk_id for an unknown piece: check the piece really is there.
  const auto id_of = [&](std::string_view name) {
    const int id = api.piece_to_id(processor, name.data(), name.size());
    return id >= 0 && piece_of(processor, id) == name ? id : -1;
  };
  const int32_t pieces = api.piece_size(processor);
  // DeBERTa-v2/v3's spm.model (the hub's microsoft/deberta-v3-*) has [PAD] [CLS] [SEP] [UNK] and
  // no [MASK]: transformers' DebertaV2Tokenizer adds [MASK] after the pieces (128000 there),
  // and so does this. No text encodes to it; the collator places it.
  const int32_t added_mask = id_of(kSpecialPieces[4]) < 0 ? pieces : -1;
  const std::string missing = missing_special_pieces(
      [&](const char* piece) { return id_of(piece) >= 0 || std::string_view(piece) == kSpecialPieces[4]; });
  if (!missing.empty()) {
    api.release(processor);
    throw DataError("tokenizer model '" + origin + "' lacks the special pieces " + missing +
                    " (train it with mlm-tokenizer, which adds [PAD] [UNK] [CLS] [SEP] [MASK])");
  }
  auto model = std::make_shared<const SentencePieceProcessor>(processor, added_mask);
  const void* sp = model->processor();
  OpenedModel opened{model, {}};
  VocabInfo& vocab = opened.vocab;
  vocab.ids = SpecialIds{id_of("[PAD]"), id_of("[UNK]"), id_of("[CLS]"), id_of("[SEP]"),
                         added_mask >= 0 ? added_mask : id_of("[MASK]")};
  if (api.unk_id(sp) != vocab.ids.unk) {
    throw DataError("tokenizer model '" + origin + "': its unknown piece is '" +
                    piece_of(sp, api.unk_id(sp)) + "', expected [UNK]");
  }
  vocab.size = pieces + (added_mask >= 0 ? 1 : 0);
  vocab.is_special.assign(static_cast<size_t>(vocab.size), 0);
  vocab.starts_word.assign(static_cast<size_t>(vocab.size), 0);
  for (int i = 0; i < pieces; ++i) {
    const unsigned flags = api.piece_flags(sp, i);
    vocab.is_special[i] = (flags & (kMlmSpmControl | kMlmSpmUnused | kMlmSpmUnknown)) != 0;
    vocab.starts_word[i] = starts_with_word_marker(piece_of(sp, i));
  }
  for (int32_t id : {vocab.ids.pad, vocab.ids.unk, vocab.ids.cls, vocab.ids.sep, vocab.ids.mask}) {
    vocab.is_special[id] = 1;
  }
  return opened;
}

}  // namespace mlm::text

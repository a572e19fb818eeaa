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
  explicit SentencePieceProcessor(void* processor) : processor_(processor, spm_api().release) {}

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
    std::string text;
    char error[512] = {};
    if (!spm_api().decode(processor_.get(), ids.data(), ids.size(), append_bytes, &text, error,
                          sizeof error)) {
      throw DataError(std::string("tokenizer: decoding failed: ") + error);
    }
    return text;
  }

  std::string id_to_piece(int32_t id) const override { return piece_of(processor_.get(), id); }

  const void* processor() const { return processor_.get(); }

 private:
  std::shared_ptr<void> processor_;  // a sentencepiece processor inside the bridge
};

}  // namespace

OpenedModel open_sentencepiece(const std::string& model_proto, const std::string& origin) {
  const MlmSpmApi& api = spm_api();
  char error[512] = {};
  void* processor = api.load(model_proto.data(), model_proto.size(), error, sizeof error);
  if (!processor) {
    throw DataError("tokenizer model '" + origin + "' is not a sentencepiece model: " + error);
  }
  auto model = std::make_shared<const SentencePieceProcessor>(processor);
  const void* sp = model->processor();
  // piece_to_id answers unk_id for an unknown piece: check the piece really is there.
  const auto id_of = [&](std::string_view name) {
    const int id = api.piece_to_id(sp, name.data(), name.size());
    return id >= 0 && piece_of(sp, id) == name ? id : -1;
  };
  const std::string missing =
      missing_special_pieces([&](const char* piece) { return id_of(piece) >= 0; });
  if (!missing.empty()) {
    throw DataError("tokenizer model '" + origin + "' lacks the special pieces " + missing +
                    " (train it with mlm-tokenizer, which adds [PAD] [UNK] [CLS] [SEP] [MASK])");
  }
  OpenedModel opened{model, {}};
  VocabInfo& vocab = opened.vocab;
  vocab.ids = SpecialIds{id_of("[PAD]"), id_of("[UNK]"), id_of("[CLS]"), id_of("[SEP]"),
                         id_of("[MASK]")};
  if (api.unk_id(sp) != vocab.ids.unk) {
    throw DataError("tokenizer model '" + origin + "': its unknown piece is '" +
                    piece_of(sp, api.unk_id(sp)) + "', expected [UNK]");
  }
  vocab.size = api.piece_size(sp);
  vocab.is_special.assign(static_cast<size_t>(vocab.size), 0);
  vocab.starts_word.assign(static_cast<size_t>(vocab.size), 0);
  for (int i = 0; i < vocab.size; ++i) {
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

#pragma once
// The tokenizer of a run: a sentencepiece model (unigram or bpe, trained from the corpus or
// loaded), a BERT WordPiece vocabulary (loaded, or trained by text/tokenizer_trainers/), or
// any Hugging Face tokenizer.json pipeline (loaded, text/hf/hf_tokenizer.h; a byte-level BPE
// one also trained by text/tokenizer_trainers/). Encodes documents to ids without [CLS]/[SEP]
// (the packer adds them). Special pieces have fixed ids in every sentencepiece model
// mlm-train trains:
//   0 [PAD] (pad), 1 [UNK] (unk), 2 [CLS] (bos), 3 [SEP] (eos), 4 [MASK] (user-defined);
// a trained tokenizer.json has its layout's (text/tokenizer_trainers/special_tokens.h).
// A loaded sentencepiece or WordPiece model must contain all five pieces; their ids are read
// from it (SpecialIds). A tokenizer.json pipeline names its own (<s>, </s>, <mask>, ...) in
// tokenizer_config.json / special_tokens_map.json: the roles cls, sep, mask, pad, unk.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/config/sections/data.h"
#include "mlm/config/sections/tokenizer.h"
#include "mlm/text/corpus/corpus_files.h"
#include "mlm/text/vocab_info.h"

namespace mlm::text {

inline constexpr const char* kSpecialPieces[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

enum class TokenizerKind { sentencepiece, wordpiece, hf };
/// "sentencepiece", "wordpiece", "hf"
const char* to_string(TokenizerKind kind);

class TokenizerModel;  // the model behind a Tokenizer (src/text/tokenizer_model.h)
class WordPiece;       // text/wordpiece.h
namespace hf {
class HfTokenizer;  // text/hf/hf_tokenizer.h
}

class Tokenizer {
 public:
  /// Loads a sentencepiece .model, a BERT vocab.txt, a Hugging Face tokenizer.json (WordPiece),
  /// or a directory holding tokenizer.json or vocab.txt (tokenizer.json preferred); the kind
  /// is told by content (see looks_like_* in tokenizer.cpp). DataError naming the file when it
  /// cannot be read or parsed, or when special pieces are missing (all missing ones listed).
  static Tokenizer load(const std::string& path);
  /// Loads a Hugging Face tokenizer.json (any pipeline hf::HfTokenizer reads: BPE, Unigram,
  /// WordPiece) or a directory holding one, the special-token roles from tokenizer_config.json
  /// and special_tokens_map.json beside it (tokenizer.type hf). DataError naming the file when
  /// it cannot be read or parsed, uses an unsupported component, or lacks a role.
  static Tokenizer load_hf(const std::string& path);
  /// The same from serialized_model() bytes (as a checkpoint stores them): a sentencepiece
  /// model proto, a WordPiece tokenizer.json text, or an hf tokenizer's files in one JSON
  /// object; `origin` names them in errors.
  static Tokenizer from_serialized(const std::string& model_proto, const std::string& origin);
  /// Wraps an already loaded WordPiece vocabulary.
  static Tokenizer from_wordpiece(WordPiece wordpiece, const std::string& origin);
  /// Wraps an already loaded tokenizer.json pipeline.
  static Tokenizer from_hf(hf::HfTokenizer tokenizer, const std::string& origin);

  /// An hf tokenizer with `tokens` added as transformers' add_tokens adds them (see
  /// text/hf/with_added_tokens.h); vocab().added_tokens lists them. Its serialized_model() and
  /// exports carry them. ConfigError naming tokenizer.add_tokens for another kind.
  Tokenizer with_added_tokens(const std::vector<std::string>& tokens) const;
  /// What train() does when `config.model` exists by the time the new model is written.
  enum class Existing {
    replace,  // mlm-tokenizer: the new model takes its place
    keep,     // a run training a missing tokenizer: another run's model, written meanwhile,
              // stays (the first writer wins, so no run's tokenizer is replaced under it)
  };

  /// Trains a sentencepiece model on the documents of `files` (paths or globs; format per
  /// file as in `read`) and writes it atomically to `config.model`. Reads at most a bounded
  /// sample (tokenizer_trainers/sentencepiece_trainer.h); ConfigError for settings
  /// sentencepiece rejects and for tokenizer.type hf (never trained). With type
  /// byte_level_bpe or wordpiece it trains a tokenizer.json directory on the whole corpus
  /// instead (tokenizer_trainers/train_tokenizer_json.h). The dispatch:
  /// text/tokenizer_trainers/train_tokenizer.cpp.
  static void train(const config::TokenizerConfig& config, const std::vector<std::string>& files,
                    const ReadOptions& read = {}, Existing existing = Existing::replace);

  const VocabInfo& vocab() const { return vocab_; }
  int64_t size() const { return vocab_.size; }
  TokenizerKind kind() const;
  /// The WordPiece model of a wordpiece tokenizer (text/wordpiece_files.h writes its files);
  /// nullptr for the other kinds.
  const WordPiece* wordpiece() const;
  /// The pipeline of an hf tokenizer (its files go into exports as they came); nullptr for
  /// the other kinds.
  const hf::HfTokenizer* hf() const;

  /// Replaces `out` by the ids of `text` (its capacity is reused). Long texts are encoded in
  /// pieces cut at whitespace, which gives the same ids as one call.
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  std::vector<int32_t> encode(std::string_view text) const;
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string id_to_piece(int32_t id) const;

  /// The file the model was loaded from ("" when built from bytes).
  std::string model_path() const { return path_; }
  /// What a checkpoint stores as tokenizer.model and from_serialized() restores: the
  /// sentencepiece model proto bytes, for wordpiece the tokenizer.json text
  /// (wordpiece_tokenizer_json), which holds the vocabulary and the normalizer options, for hf
  /// {"hf_tokenizer_files": {"tokenizer.json": text, ...}} (its files, byte for byte).
  const std::string& serialized_model() const { return serialized_; }

 private:
  Tokenizer() = default;

  std::shared_ptr<const TokenizerModel> model_;  // shared by copies; immutable
  VocabInfo vocab_;
  std::string path_;
  std::string serialized_;
};

/// The run's tokenizer: loads tokenizer.model, or trains it first from
/// tokenizer.training_files (default data.train_files) when the file is missing and
/// tokenizer.train_if_missing is set (reading them as `data` says); otherwise ConfigError
/// naming tokenizer.model. With tokenizer.type hf it only loads (a missing model is that
/// ConfigError); byte_level_bpe loads its directory as hf. ConfigError too when the model's kind does not match tokenizer.type.
Tokenizer load_or_train_tokenizer(const config::TokenizerConfig& tokenizer,
                                  const config::DataConfig& data);

/// The files a missing tokenizer is trained on: tokenizer.training_files, else
/// data.train_files, else the text files of every data.sources entry.
std::vector<std::string> tokenizer_training_files(const config::TokenizerConfig& tokenizer,
                                                  const config::DataConfig& data);

}  // namespace mlm::text

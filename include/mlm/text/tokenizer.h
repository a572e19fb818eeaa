#pragma once
// The sentencepiece tokenizer of a run: trains a model from the corpus, loads one, encodes
// documents to ids. Special pieces have fixed ids in every model mlm-train trains:
//   0 [PAD] (pad), 1 [UNK] (unk), 2 [CLS] (bos), 3 [SEP] (eos), 4 [MASK] (user-defined).
// A loaded model must contain all five pieces; their ids are read from it (SpecialIds).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/text/corpus_files.h"
#include "mlm/text/vocab_info.h"

namespace mlm::text {

inline constexpr const char* kSpecialPieces[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

class Tokenizer {
 public:
  /// Loads a sentencepiece .model. DataError naming the file when it cannot be read or
  /// parsed, or when special pieces are missing (all missing ones are listed).
  static Tokenizer load(const std::string& path);
  /// The same from the model proto bytes (as a checkpoint stores them); `origin` names them.
  static Tokenizer from_serialized(const std::string& model_proto, const std::string& origin);

  /// What train() does when `config.model` exists by the time the new model is written.
  enum class Existing {
    replace,  // mlm-tokenizer: the new model takes its place
    keep,     // a run training a missing tokenizer: another run's model, written meanwhile,
              // stays (the first writer wins, so no run's tokenizer is replaced under it)
  };

  /// Trains a model on the documents of `files` (paths or globs; format per file as in
  /// `read`) and writes it atomically to `config.model`. Reads at most a bounded sample
  /// (see tokenizer_training.cpp); ConfigError for settings sentencepiece rejects.
  static void train(const config::TokenizerConfig& config, const std::vector<std::string>& files,
                    const ReadOptions& read = {}, Existing existing = Existing::replace);

  const VocabInfo& vocab() const { return vocab_; }
  int64_t size() const { return vocab_.size; }

  /// Replaces `out` by the ids of `text` (its capacity is reused). Long texts are encoded in
  /// pieces cut at whitespace, which gives the same ids as one call.
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  std::vector<int32_t> encode(std::string_view text) const;
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string id_to_piece(int32_t id) const;

  /// The file the model was loaded from ("" when built from bytes).
  std::string model_path() const { return path_; }
  /// The model proto bytes: a checkpoint stores them; from_serialized() restores them.
  const std::string& serialized_model() const { return serialized_; }

 private:
  Tokenizer() = default;
  void init(const std::string& origin);

  std::shared_ptr<void> processor_;  // a sentencepiece processor inside the bridge
                                     // (src/text/spm_library.h), shared by copies
  VocabInfo vocab_;
  std::string path_;
  std::string serialized_;
};

/// The run's tokenizer: loads tokenizer.model, or trains it first from
/// tokenizer.training_files (default data.train_files) when the file is missing and
/// tokenizer.train_if_missing is set; otherwise ConfigError naming tokenizer.model.
Tokenizer ensure_tokenizer(const config::RunConfig& config);

}  // namespace mlm::text

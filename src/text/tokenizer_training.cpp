// Training a sentencepiece model from the corpus through the library API, fed by a sentence
// iterator over our own document reader (so txt, jsonl and gzip all work, and the amount
// read is bounded however large the corpus is).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>
#include <unordered_map>

#include "mlm/text/corpus/document_reader.h"
#include "mlm/text/tokenizer.h"
#include "mlm/text/training/train_tokenizer_json.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "sentencepiece/spm_library.h"

namespace mlm::text {
namespace {

// Fixed seed of the file order and of sentencepiece's sentence sampling: the same corpus
// and settings give the same model.
constexpr uint64_t kTrainingSeed = 20240611;

// Sentences handed to sentencepiece, which then draws a uniform random sample of
// input_sentence_size of them (reservoir sampling). Reading stops after
// kReadFactor * input_sentence_size sentences, each file contributing at most an equal share
// (files visited in a seeded random order), so a terabyte corpus costs a bounded read. The
// price: a huge single file is sampled from its beginning.
constexpr int64_t kReadFactor = 4;

// Exceptions must not cross the bridge's C interface: a reading error ends the sentences and
// is rethrown after training returns.
class CorpusSentenceIterator {
 public:
  CorpusSentenceIterator(std::vector<CorpusFile> files, const ReadOptions& options,
                         int64_t max_sentences, size_t max_sentence_bytes)
      : files_(std::move(files)), options_(options), max_sentences_(max_sentences),
        max_sentence_bytes_(max_sentence_bytes) {
    std::mt19937_64 rng(kTrainingSeed);
    for (size_t i = files_.size(); i > 1; --i) std::swap(files_[i - 1], files_[rng() % i]);
    per_file_ = std::max<int64_t>(1, max_sentences_ / static_cast<int64_t>(files_.size()));
    Next();
  }

  /// MlmSpmSentenceSource: the current sentence, then advances; 0 when none is left.
  static int source(void* context, const char** data, size_t* size) {
    auto* self = static_cast<CorpusSentenceIterator*>(context);
    if (self->done_) return 0;
    self->handed_out_ = self->sentence_;
    *data = self->handed_out_.data();
    *size = self->handed_out_.size();
    self->Next();
    return 1;
  }

  void Next() {
    try {
      advance();
    } catch (...) {
      error_ = std::current_exception();
      done_ = true;
    }
  }

  std::exception_ptr error() const { return error_; }
  int64_t sentences() const { return total_; }

 private:
  void advance() {
    for (;;) {
      if (total_ >= max_sentences_) {
        done_ = true;
        return;
      }
      if (next_line()) {
        ++total_;
        ++from_file_;
        return;
      }
      if (!reader_ || from_file_ >= per_file_) {
        if (file_index_ >= files_.size()) {
          done_ = true;
          return;
        }
        reader_ = std::make_unique<DocumentReader>(files_[file_index_++], options_);
        from_file_ = 0;
        doc_.text.clear();
        doc_pos_ = 0;
      }
      if (!reader_->next(doc_)) {
        reader_.reset();
        from_file_ = per_file_;
      } else {
        doc_pos_ = 0;
      }
    }
  }

  // The next non-empty line of the current document, cut to max_sentence_bytes.
  bool next_line() {
    if (from_file_ >= per_file_) return false;
    while (doc_pos_ < doc_.text.size()) {
      size_t end = doc_.text.find('\n', doc_pos_);
      if (end == std::string::npos) end = doc_.text.size();
      std::string_view line(doc_.text.data() + doc_pos_, end - doc_pos_);
      if (line.size() > max_sentence_bytes_) {
        const size_t cut = cut_point(line, max_sentence_bytes_);
        line = line.substr(0, cut);
        doc_pos_ += cut;
      } else {
        doc_pos_ = end + 1;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      sentence_.assign(line);
      return true;
    }
    return false;
  }

  std::vector<CorpusFile> files_;
  ReadOptions options_;
  int64_t max_sentences_;
  size_t max_sentence_bytes_;
  int64_t per_file_ = 0;
  size_t file_index_ = 0;
  std::unique_ptr<DocumentReader> reader_;
  Document doc_;
  size_t doc_pos_ = 0;
  int64_t from_file_ = 0;
  int64_t total_ = 0;
  std::string sentence_;
  std::string handed_out_;
  bool done_ = false;
  std::exception_ptr error_;
};

/// sentencepiece's trainer arguments for `config`; ConfigError for a vocabulary too small for
/// the special pieces.
std::unordered_map<std::string, std::string> sentencepiece_trainer_args(
    const config::TokenizerConfig& config) {
  const int64_t specials = 5;
  if (config.vocab_size <= specials + 1) {
    throw ConfigError("tokenizer.vocab_size (" + std::to_string(config.vocab_size) +
                          ") must exceed the 5 special pieces",
                      "tokenizer.vocab_size");
  }
  return {
      {"model_type", config.type == config::TokenizerType::bpe ? "bpe" : "unigram"},
      {"vocab_size", std::to_string(config.vocab_size)},
      {"character_coverage", std::to_string(config.character_coverage)},
      {"input_sentence_size", std::to_string(config.input_sentence_size)},
      {"shuffle_input_sentence", "true"},
      {"max_sentence_length", std::to_string(config.max_sentence_length)},
      {"byte_fallback", config.byte_fallback ? "true" : "false"},
      {"normalization_rule_name", config.lowercase ? "nmt_nfkc_cf" : "nmt_nfkc"},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "2"},
      {"eos_id", "3"},
      {"pad_piece", "[PAD]"},
      {"unk_piece", "[UNK]"},
      {"bos_piece", "[CLS]"},
      {"eos_piece", "[SEP]"},
      {"user_defined_symbols", "[MASK]"},  // id 4: the first id after the four above
      {"num_threads", std::to_string(std::max(1u, std::thread::hardware_concurrency()))},
  };
}

/// The serialized model sentencepiece trains on `sentences`. Rethrows a reading error of the
/// iterator; ConfigError when sentencepiece fails, DataError for a corpus without text.
std::string run_sentencepiece_trainer(const std::unordered_map<std::string, std::string>& args,
                                      CorpusSentenceIterator& sentences) {
  std::vector<const char*> keys, values;
  for (const auto& [key, value] : args) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  std::string model_proto;
  char error[1024] = {};
  const bool ok = spm_api().train(
      keys.data(), values.data(), keys.size(), CorpusSentenceIterator::source, &sentences,
      static_cast<unsigned>(kTrainingSeed), spdlog::get_level() <= spdlog::level::debug ? 0 : 1,
      [](void* context, const char* data, size_t size) {
        static_cast<std::string*>(context)->assign(data, size);
      },
      &model_proto, error, sizeof error);
  if (sentences.error()) std::rethrow_exception(sentences.error());
  if (!ok) {
    throw ConfigError(std::string("tokenizer training failed: ") + error +
                          " (check tokenizer.vocab_size against the corpus size)",
                      "tokenizer.vocab_size");
  }
  if (sentences.sentences() == 0) throw DataError("tokenizer training: the corpus has no text");
  return model_proto;
}

/// Writes `model_proto` to `model`. Written to a temporary name of this writer's own, then
/// moved into place, so a crash never leaves half a model and writers at once (sibling runs
/// sharing tokenizer.model) do not mix. Existing::keep links instead of renaming: linking
/// fails when the name exists.
void install_model_file(const std::string& model, const std::string& model_proto,
                        Tokenizer::Existing existing) {
  const std::filesystem::path path(model);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::string tmp = model + ".tmp-" + std::to_string(getpid()) + "-" +
                          std::to_string(std::random_device{}());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(model_proto.data(), static_cast<std::streamsize>(model_proto.size()));
    if (!out) throw DataError("cannot write tokenizer model '" + tmp + "'");
  }
  std::error_code linked;
  if (existing == Tokenizer::Existing::keep) std::filesystem::create_hard_link(tmp, path, linked);
  if (existing == Tokenizer::Existing::keep && linked == std::errc::file_exists) {
    log::info("text", "{} was written by another run meanwhile; keeping that one", model);
  } else if (existing == Tokenizer::Existing::replace || linked) {
    std::filesystem::rename(tmp, path);  // replace, or a file system without hard links
  }
  std::error_code ignored;
  std::filesystem::remove(tmp, ignored);  // after a link (or a kept model)
}

// hf tokenizers come with the model they belong to; the other kinds train.
bool loaded_only(config::TokenizerType type) { return type == config::TokenizerType::hf; }

std::string loaded_from(config::TokenizerType) { return "a Hugging Face tokenizer.json or a directory holding one"; }

// byte_level_bpe and wordpiece train a tokenizer.json directory (text/training/).
bool trains_tokenizer_json(config::TokenizerType type) {
  return type == config::TokenizerType::byte_level_bpe || type == config::TokenizerType::wordpiece;
}

/// Writes `files` as the directory `dir`: into a directory of this writer's own, then renamed
/// into place, so a crash never leaves half a tokenizer. Existing::keep keeps a directory
/// another run wrote meanwhile.
void install_tokenizer_directory(const std::string& dir, const training::TokenizerFiles& files,
                                 Tokenizer::Existing existing) {
  namespace fs = std::filesystem;
  const fs::path path(dir);
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path tmp = dir + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}());
  training::write_tokenizer_files(tmp, files);
  std::error_code error;
  if (fs::exists(path) && existing == Tokenizer::Existing::replace) {
    for (const char* name : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
      fs::rename(tmp / name, path / name);
    }
  } else {
    fs::rename(tmp, path, error);  // fails when another run's directory landed first
    if (error) log::info("text", "{} was written by another run meanwhile; keeping that one", dir);
  }
  fs::remove_all(tmp, error);
}

}  // namespace

void Tokenizer::train(const config::TokenizerConfig& config, const std::vector<std::string>& files,
                      const ReadOptions& read, Existing existing) {
  if (loaded_only(config.type)) {
    throw ConfigError("tokenizer.type: " + std::string(config::to_string(config.type)) +
                          " tokenizers are loaded from " + loaded_from(config.type) +
                          ", not trained; mlm-tokenizer trains unigram, bpe, wordpiece and byte_level_bpe",
                      "tokenizer.type");
  }
  // Training replaces tokenizer.model: a directory for the tokenizer.json kinds, a file for
  // sentencepiece. The other kind of thing at that path is not ours to replace.
  const bool writes_directory = trains_tokenizer_json(config.type);
  std::error_code error;
  const auto status = std::filesystem::status(config.model, error);
  if (std::filesystem::exists(status) && std::filesystem::is_directory(status) != writes_directory) {
    throw ConfigError("tokenizer.model: '" + config.model + "' is a " +
                          (writes_directory ? "file" : "directory") + "; tokenizer.type " +
                          std::string(config::to_string(config.type)) + " trains " +
                          (writes_directory ? "a directory of tokenizer.json files"
                                            : "a sentencepiece model file") +
                          " there: name another path",
                      "tokenizer.model");
  }
  auto corpus = resolve_corpus(files, read, config.training_files.empty() ? "data.train_files"
                                                                          : "tokenizer.training_files");
  if (trains_tokenizer_json(config.type)) {
    log::info("text", "training a {} tokenizer of {} pieces from {}", config::to_string(config.type),
              config.vocab_size, files.front() + (files.size() > 1 ? ", ..." : ""));
    install_tokenizer_directory(config.model, training::train_tokenizer_files(config, corpus, read), existing);
    log::info("text", "tokenizer trained: {}", config.model);
    return;
  }
  auto args = sentencepiece_trainer_args(config);

  CorpusSentenceIterator sentences(std::move(corpus), read,
                                   kReadFactor * std::max<int64_t>(1, config.input_sentence_size),
                                   static_cast<size_t>(config.max_sentence_length));
  log::info("text", "training a {} tokenizer of {} pieces from {}",
            args["model_type"], config.vocab_size, files.front() + (files.size() > 1 ? ", ..." : ""));
  const std::string model_proto = run_sentencepiece_trainer(args, sentences);
  install_model_file(config.model, model_proto, existing);
  log::info("text", "tokenizer trained on a sample of at most {} of {} sentences read: {}",
            config.input_sentence_size, sentences.sentences(), config.model);
}

namespace {

// tokenizer.type says which kind tokenizer.model must be.
TokenizerKind kind_of(config::TokenizerType type) {
  switch (type) {
    case config::TokenizerType::wordpiece: return TokenizerKind::wordpiece;
    case config::TokenizerType::hf:
    case config::TokenizerType::byte_level_bpe: return TokenizerKind::hf;
    default: return TokenizerKind::sentencepiece;
  }
}

const char* kind_described(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::sentencepiece: return "sentencepiece model";
    case TokenizerKind::wordpiece: return "WordPiece vocabulary";
    case TokenizerKind::hf: return "tokenizer.json pipeline";
  }
  return "tokenizer";
}

Tokenizer checked_kind(Tokenizer tokenizer, const config::TokenizerConfig& config) {
  const TokenizerKind want = kind_of(config.type);
  if (tokenizer.kind() != want) {
    const bool suggest = tokenizer.kind() == TokenizerKind::wordpiece;
    throw ConfigError("tokenizer.model: '" + config.model + "' is a " + kind_described(tokenizer.kind()) +
                          " but tokenizer.type is " + std::string(config::to_string(config.type)) +
                          (suggest ? " (set tokenizer.type: wordpiece or hf)" : ""),
                      "tokenizer.model");
  }
  return tokenizer;
}

}  // namespace

Tokenizer load_or_train_tokenizer(const config::TokenizerConfig& tokenizer,
                                  const config::DataConfig& data) {
  const auto& path = tokenizer.model;
  if (std::filesystem::exists(path)) {
    auto loaded = checked_kind(kind_of(tokenizer.type) == TokenizerKind::hf ? Tokenizer::load_hf(path) : Tokenizer::load(path),
                               tokenizer);
    return tokenizer.add_tokens.empty() ? loaded : loaded.with_added_tokens(tokenizer.add_tokens);
  }
  if (loaded_only(tokenizer.type)) {
    throw ConfigError("tokenizer.model: '" + path + "' does not exist (tokenizer.type " +
                          std::string(config::to_string(tokenizer.type)) + " loads " +
                          loaded_from(tokenizer.type) + "; it is never trained)",
                      "tokenizer.model");
  }
  if (!tokenizer.train_if_missing) {
    throw ConfigError("tokenizer.model: '" + path +
                          "' does not exist (train one with mlm-tokenizer, or set "
                          "tokenizer.train_if_missing: true)",
                      "tokenizer.model");
  }
  log::info("text", "tokenizer model '{}' is missing: training it first", path);
  Tokenizer::train(tokenizer, tokenizer_training_files(tokenizer, data), ReadOptions::from(data),
                   Tokenizer::Existing::keep);
  return checked_kind(kind_of(tokenizer.type) == TokenizerKind::hf ? Tokenizer::load_hf(path) : Tokenizer::load(path),
                      tokenizer);
}

std::vector<std::string> tokenizer_training_files(const config::TokenizerConfig& tokenizer,
                                                  const config::DataConfig& data) {
  if (!tokenizer.training_files.empty()) return tokenizer.training_files;
  if (!data.train_files.empty()) return data.train_files;
  std::vector<std::string> files;  // a mixture: every source's text files
  for (const auto& source : data.sources) {
    files.insert(files.end(), source.files.begin(), source.files.end());
  }
  return files;
}

}  // namespace mlm::text

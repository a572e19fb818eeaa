// Training a sentencepiece model from the corpus through the library API, fed by a sentence
// iterator over our own document reader (so txt, jsonl and gzip all work, and the amount
// read is bounded however large the corpus is).
#include "mlm/text/tokenizer_trainers/sentencepiece_trainer.h"

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

#include "../sentencepiece/spm_library.h"
#include "mlm/text/corpus/document_reader.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text::tokenizer_trainers {
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

}  // namespace

void train_sentencepiece(const config::TokenizerConfig& config, std::vector<CorpusFile> corpus,
                         const ReadOptions& read, Tokenizer::Existing existing) {
  const auto args = sentencepiece_trainer_args(config);
  CorpusSentenceIterator sentences(std::move(corpus), read,
                                   kReadFactor * std::max<int64_t>(1, config.input_sentence_size),
                                   static_cast<size_t>(config.max_sentence_length));
  const std::string model_proto = run_sentencepiece_trainer(args, sentences);
  install_model_file(config.model, model_proto, existing);
  log::info("text", "tokenizer trained on a sample of at most {} of {} sentences read: {}",
            config.input_sentence_size, sentences.sentences(), config.model);
}

}  // namespace mlm::text::tokenizer_trainers

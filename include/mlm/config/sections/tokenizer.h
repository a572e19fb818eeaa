#pragma once
// The tokenizer.* section: the tokenizer to load, or to train from the corpus.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/enums.h"

namespace mlm::config {

struct TokenizerConfig {
  std::string model = "tokenizer/spm.model";  // sentencepiece .model to load or train; for
                                           // wordpiece a BERT vocab.txt, tokenizer.json or
                                           // Hugging Face directory (a directory when trained);
                                           // for byte_level_bpe the directory to load or train
  bool train_if_missing = true;            // train `model` from the corpus when it is missing
  TokenizerType type = TokenizerType::unigram;  // unigram | bpe (sentencepiece) | wordpiece |
                                           // hf (loaded only) | byte_level_bpe; wordpiece and
                                           // byte_level_bpe train a tokenizer.json directory
  int64_t vocab_size = 30522;              // pieces, the 5 special tokens included
  double character_coverage = 0.9995;      // sentencepiece character_coverage
  int64_t input_sentence_size = 1000000;   // random sample of sentences to train on (bounded)
  int64_t max_sentence_length = 16384;     // longer training sentences are skipped (bytes)
  bool lowercase = false;                  // sentencepiece training: lower-case (nmt_nfkc_cf);
                                           // wordpiece training: BertNormalizer lowercase (a
                                           // loaded one follows its own files)
  bool byte_fallback = false;              // unknown characters become <0xXX> byte pieces
  std::vector<std::string> training_files; // empty = data.train_files
  std::vector<std::string> add_tokens;     // type hf: terms made single tokens (new ids after
                                           // the largest; rows initialised by their pieces' mean)
  SpecialTokenStyle special_tokens = SpecialTokenStyle::automatic;  // trained tokenizer.json:
                                           // auto | roberta (<s> <pad> </s> <unk> <mask>,
                                           // byte_level_bpe) | modernbert ([CLS] [SEP] [MASK] ...
                                           // appended, byte_level_bpe) | bert (wordpiece)
  int64_t min_frequency = 2;               // trained tokenizer.json: a merge needs this many uses
  int64_t limit_alphabet = 1000;           // wordpiece training: most frequent characters kept
                                           // (0 = all); byte_level_bpe keeps its 256 bytes
  int64_t regex_step_limit = 1000;         // type hf: units of 10,000 ICU regex engine steps
                                           // one match of a tokenizer.json pattern may take
                                           // before the run stops; 0 = no limit (steps, not
                                           // time: the same on every machine). Old name
                                           // regex_time_limit, still read (renamed_keys.cpp)

  template <class V>
  void visit(V& v) {
    v("model", model);
    v("train_if_missing", train_if_missing);
    v("type", type);
    v("vocab_size", vocab_size);
    v("character_coverage", character_coverage);
    v("input_sentence_size", input_sentence_size);
    v("max_sentence_length", max_sentence_length);
    v("lowercase", lowercase);
    v("byte_fallback", byte_fallback);
    v("training_files", training_files);
    v("add_tokens", add_tokens);
    v("special_tokens", special_tokens);
    v("min_frequency", min_frequency);
    v("limit_alphabet", limit_alphabet);
    v("regex_step_limit", regex_step_limit);
  }
};

}  // namespace mlm::config

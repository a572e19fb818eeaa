#pragma once
// What the masking collator and the model need to know about the vocabulary, without
// depending on the tokenizer: special ids, which pieces are special, which begin a word.
#include <cstdint>
#include <vector>

namespace mlm::text {

/// Fixed ids of the special tokens in every tokenizer model mlm-train trains.
/// A loaded model must contain the pieces; their ids are read from it.
struct SpecialIds {
  int32_t pad = 0;   // [PAD]
  int32_t unk = 1;   // [UNK]
  int32_t cls = 2;   // [CLS]
  int32_t sep = 3;   // [SEP]
  int32_t mask = 4;  // [MASK]
};

/// A tokenizer.add_tokens term: its new id and the ids it tokenized into before (the model
/// initialises its embedding row by their mean).
struct AddedTokenRow {
  int32_t id = 0;
  std::vector<int32_t> pieces;
};

struct VocabInfo {
  int64_t size = 0;                    // number of pieces (unpadded)
  SpecialIds ids;
  std::vector<uint8_t> is_special;     // [size]: never selected, never a random replacement
  std::vector<uint8_t> starts_word;    // [size]: piece begins a word (whole-word masking):
                                       // sentencepiece: starts with U+2581; WordPiece: does
                                       // not start with the "##" continuation prefix
  std::vector<AddedTokenRow> added_tokens;  // this run's tokenizer.add_tokens (ids ascending); empty
                                         // for a tokenizer restored from a checkpoint
};

}  // namespace mlm::text

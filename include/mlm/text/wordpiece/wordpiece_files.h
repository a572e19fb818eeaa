#pragma once
// The files a Hugging Face BERT tokenizer directory holds for a WordPiece tokenizer: the
// tokenizer.json BertTokenizerFast would save, and vocab.txt. The exporter writes them; a
// checkpoint stores the tokenizer.json text as its tokenizer.model.
#include <string>

#include <nlohmann/json.hpp>

#include "mlm/text/tokenizer.h"
#include "mlm/text/wordpiece/wordpiece.h"

namespace mlm::text {

/// tokenizer.json: BertNormalizer with the tokenizer's options, BertPreTokenizer, the
/// WordPiece model (vocabulary in id order), TemplateProcessing "[CLS] $A [SEP]" and
/// "[CLS] $A [SEP] $B:1 [SEP]:1" with the vocabulary's special ids, the WordPiece decoder
/// (cleanup on), and the added tokens. Key order as HF writes it.
nlohmann::ordered_json wordpiece_tokenizer_json(const WordPiece& wordpiece);
/// The same for a wordpiece Tokenizer; std::invalid_argument for a sentencepiece one.
nlohmann::ordered_json wordpiece_tokenizer_json(const Tokenizer& tokenizer);

/// vocab.txt: one token per line, in id order.
std::string wordpiece_vocab_txt(const WordPiece& wordpiece);

}  // namespace mlm::text

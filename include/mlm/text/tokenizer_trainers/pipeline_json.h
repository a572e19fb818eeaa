#pragma once
// The tokenizer.json stages of the tokenizers mlm-train trains, as `tokenizers` writes them:
// the word counting runs exactly these (through the hf room's own normalizers and
// pre-tokenizers), and the writer puts them into tokenizer.json.
#include <nlohmann/json.hpp>

namespace mlm::text::tokenizer_trainers {

/// The kind trained: byte-level BPE (RoBERTa's, ModernBERT's) or BERT's WordPiece.
enum class TrainedKind { byte_level_bpe, wordpiece };

struct PipelineOptions {
  TrainedKind kind = TrainedKind::byte_level_bpe;
  bool nfc = false;        // byte_level_bpe: an NFC normalizer first (ModernBERT's)
  bool lowercase = false;  // wordpiece: BertNormalizer lowercase
};

/// "normalizer": null, NFC, or BertNormalizer.
nlohmann::json normalizer_json(const PipelineOptions& options);
/// "pre_tokenizer": ByteLevel (GPT-2's pattern, no prefix space) or BertPreTokenizer.
nlohmann::json pre_tokenizer_json(const PipelineOptions& options);
/// "decoder": ByteLevel or WordPiece ("##").
nlohmann::json decoder_json(const PipelineOptions& options);

}  // namespace mlm::text::tokenizer_trainers

#pragma once
// A trained model as the three files of a Hugging Face tokenizer directory: tokenizer.json
// (the pipeline as `tokenizers` writes it), tokenizer_config.json and special_tokens_map.json
// (PreTrainedTokenizerFast with the special-token roles, which transformers.AutoTokenizer and
// mlm-train's tokenizer.type hf both read).
#include <filesystem>
#include <string>

#include "mlm/text/tokenizer_trainers/bpe_trainer.h"
#include "mlm/text/tokenizer_trainers/pipeline_json.h"
#include "mlm/text/tokenizer_trainers/special_tokens.h"

namespace mlm::text::tokenizer_trainers {

struct TokenizerFiles {
  std::string tokenizer_json, tokenizer_config_json, special_tokens_map_json;
};

/// The files of `model` (from train_bpe; for WordPiece its vocabulary is the model's).
TokenizerFiles tokenizer_files(const BpeModel& model, const PipelineOptions& pipeline, const SpecialTokens& specials);

/// Writes `files` into the directory `dir` (created; files replaced).
void write_tokenizer_files(const std::filesystem::path& dir, const TokenizerFiles& files);

}  // namespace mlm::text::tokenizer_trainers

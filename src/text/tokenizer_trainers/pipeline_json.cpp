#include "mlm/text/tokenizer_trainers/pipeline_json.h"

namespace mlm::text::tokenizer_trainers {

nlohmann::json normalizer_json(const PipelineOptions& options) {
  if (options.kind == TrainedKind::wordpiece) {
    return {{"type", "BertNormalizer"}, {"clean_text", true}, {"handle_chinese_chars", true},
            {"strip_accents", nullptr}, {"lowercase", options.lowercase}};
  }
  if (options.nfc) return {{"type", "NFC"}};
  return nullptr;
}

nlohmann::json pre_tokenizer_json(const PipelineOptions& options) {
  if (options.kind == TrainedKind::wordpiece) return {{"type", "BertPreTokenizer"}};
  return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
}

nlohmann::json decoder_json(const PipelineOptions& options) {
  if (options.kind == TrainedKind::wordpiece) return {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
  return {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
}

}  // namespace mlm::text::tokenizer_trainers

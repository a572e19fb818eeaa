#pragma once
// The special tokens of a trained tokenizer.json, in the layouts of the encoders it is for:
//   roberta:    <s> <pad> </s> <unk> <mask> as ids 0-4, RobertaProcessing;
//   modernbert: <|endoftext|> <|padding|> as ids 0-1, [UNK] [CLS] [SEP] [PAD] [MASK] added
//               after the trained pieces, TemplateProcessing "[CLS] $A [SEP]" (an NFC
//               normalizer, as answerdotai/ModernBERT-base's tokenizer.json);
//   bert:       [PAD] [UNK] [CLS] [SEP] [MASK] as ids 0-4, TemplateProcessing
//               "[CLS] $A [SEP]" / "... $B:1 [SEP]:1".
#include <string>
#include <vector>

#include "mlm/config/enums.h"

namespace mlm::text::tokenizer_trainers {

struct SpecialTokens {
  config::SpecialTokenStyle style = config::SpecialTokenStyle::roberta;
  std::vector<std::string> leading;   // trainer special tokens: the first ids
  std::vector<std::string> trailing;  // added after the trained vocabulary
  std::string cls, sep, pad, unk, mask, bos, eos;  // the roles ("" bos/eos: none)
  std::string lstrip;                              // the token matched with lstrip (<mask>)
};

/// The layout of `style` (not automatic).
SpecialTokens special_tokens_of(config::SpecialTokenStyle style);

}  // namespace mlm::text::tokenizer_trainers

#include "mlm/text/tokenizer_trainers/special_tokens.h"

namespace mlm::text::tokenizer_trainers {

SpecialTokens special_tokens_of(config::SpecialTokenStyle style) {
  SpecialTokens t;
  t.style = style;
  switch (style) {
    case config::SpecialTokenStyle::modernbert:
      t.leading = {"<|endoftext|>", "<|padding|>"};
      t.trailing = {"[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"};
      t.cls = "[CLS]", t.sep = "[SEP]", t.pad = "[PAD]", t.unk = "[UNK]", t.mask = "[MASK]";
      t.lstrip = "[MASK]";
      break;
    case config::SpecialTokenStyle::bert:
      t.leading = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
      t.cls = "[CLS]", t.sep = "[SEP]", t.pad = "[PAD]", t.unk = "[UNK]", t.mask = "[MASK]";
      break;
    default:  // roberta
      t.style = config::SpecialTokenStyle::roberta;
      t.leading = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
      t.cls = "<s>", t.sep = "</s>", t.pad = "<pad>", t.unk = "<unk>", t.mask = "<mask>";
      t.bos = "<s>", t.eos = "</s>";
      t.lstrip = "<mask>";
      break;
  }
  return t;
}

}  // namespace mlm::text::tokenizer_trainers

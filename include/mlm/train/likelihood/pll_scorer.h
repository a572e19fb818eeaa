#pragma once
// The pseudo-log-likelihood of a sentence under a masked LM (Salazar et al. 2020), with Kauf &
// Ivanova's 2023 within-word correction, scored as minicons' MaskedLMScorer scores it:
//   the sentence is [CLS] pieces [SEP]; every position whose id is not [CLS], [SEP] or [PAD]
//   is a target; row t of the batch is the sentence with target t masked (within_word_l2r:
//   also the later pieces of t's word), and PLL = sum over t of ln p(original_t | row t).
// Words are the tokenizer's pre-tokens (its word starts): the pieces a Hugging Face fast
// tokenizer's word_ids() groups.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <torch/torch.h>

#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train::likelihood {

enum class PllVariant { original, within_word_l2r };
/// "original" / "within_word_l2r"; UsageError naming `what` for another name.
PllVariant parse_pll_variant(const std::string& name, const std::string& what);
const char* to_string(PllVariant variant);

/// A sentence as the model reads it: [CLS] pieces [SEP], and which ids begin a word.
struct EncodedSentence {
  std::vector<int64_t> ids;
  std::vector<uint8_t> starts_word;  // per id; the specials 1
};

struct SentenceScore {
  double log_prob = 0;  // the pseudo-log-likelihood: natural log, summed over the targets
  int64_t tokens = 0;   // targets scored
};

class PllScorer {
 public:
  /// `model`: an MLM, or an RTD pair (its generator is the MLM scored). Runs in fp32 on the
  /// model's device; `max_batch_tokens` bounds one forward (rows x length), the copies of a
  /// sentence sharing a forward as far as it allows.
  PllScorer(model::MaskedLm model, text::Tokenizer tokenizer, int64_t max_batch_tokens = 32768);

  EncodedSentence encode(std::string_view text) const;
  /// The longest sentence ([CLS] and [SEP] included) the model's positions hold.
  int64_t max_length() const { return max_length_; }
  /// UsageError for a sentence longer than max_length() (callers name its file and line first).
  SentenceScore score(const EncodedSentence& sentence, PllVariant variant);

 private:
  model::MaskedLm mlm_;  // the network that predicts masked tokens
  text::Tokenizer tokenizer_;
  int64_t max_length_, max_batch_tokens_;
};

}  // namespace mlm::train::likelihood

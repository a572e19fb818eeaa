#pragma once
// Which positions of one sequence are selected for prediction: the maskable positions and
// words of a sequence, the token budget, and the three placement strategies. The collator
// composes them; they are public so tests (and mlm-data --json) can inspect the selection.
#include <cstdint>
#include <limits>
#include <vector>

#include "mlm/config/sections/masking.h"
#include "mlm/masking/masking_rng.h"
#include "mlm/masking/span_length.h"
#include "mlm/text/vocab_info.h"

namespace mlm::masking {

/// A word: pieces [begin, end) of one maskable run (a maximal stretch of positions with no
/// special token or padding). It starts at a piece that starts a word (the U+2581 marker)
/// or at the start of its run, and takes the following pieces that do not start a word.
struct Word {
  int32_t begin = 0;
  int32_t end = 0;  // exclusive
  int32_t run = 0;  // index of its maskable run: words of one run are adjacent
};

/// A group of positions [begin, end) selected together. Token strategy: one position;
/// whole_word: one word; span: consecutive whole words of one run.
struct MaskedSpan {
  int32_t begin = 0;
  int32_t end = 0;            // exclusive
  int32_t words = 0;          // whole words covered (token strategy: 1 piece = 1)
  int32_t sampled_words = 0;  // span: the length drawn; it is cut short at a run end, at an
                              // already selected word or at the budget. Others: = words.
};

/// The maskable positions of one sequence and its words.
struct MaskableSequence {
  std::vector<int32_t> positions;  // ascending
  std::vector<Word> words;         // ascending, covering exactly `positions`
};

/// A maskable position holds neither a special token (VocabInfo::is_special) nor [PAD].
/// `ids` must be in [0, vocab.size).
MaskableSequence find_maskable(const std::vector<int32_t>& ids, const text::VocabInfo& vocab);

/// How many tokens to select among n maskable ones.
struct SelectionBudget {
  int64_t tokens = 0;  // target; never above `limit`
  int64_t limit = std::numeric_limits<int64_t>::max();  // max_predictions_per_seq, or none
  bool at_least_one = false;  // count: exact with n >= 1 — select one word even when every
                              // word is longer than `tokens` (never beyond `limit`)
};

/// count: exact -> floor(p·n) + Bernoulli(frac(p·n)), at least 1 when n >= 1;
/// count: bernoulli -> Binomial(n, p) (the count of n independent per-position draws).
/// Both then capped by max_predictions_per_seq when it is > 0.
SelectionBudget draw_budget(int64_t n, const config::MaskingConfig& cfg, MaskingRng& rng);

/// `budget.tokens` positions drawn uniformly without replacement. With count: bernoulli this
/// has exactly the law of selecting each position independently with probability p (a
/// Binomial count, then a uniform subset of that size), the cap included.
std::vector<MaskedSpan> select_tokens(const MaskableSequence& seq, const SelectionBudget& budget,
                                      MaskingRng& rng);

/// Words in uniformly random order, each taken whole while it fits the budget; a word that
/// would overshoot is skipped and later (shorter) words are still tried, as Hugging Face's
/// DataCollatorForWholeWordMask and Google's create_pretraining_data.py do. The count can
/// therefore fall short of the budget only when no remaining word fits.
std::vector<MaskedSpan> select_whole_words(const MaskableSequence& seq,
                                           const SelectionBudget& budget, MaskingRng& rng);

/// SpanBERT: repeatedly draw a length L ~ `lengths` and a uniformly random unselected word as
/// the anchor, and take the anchor and the words after it, up to L words, stopping at the end
/// of the maskable run (a special token or the sequence end), at a word already selected, or
/// at a word that would overshoot the budget. An anchor that does not fit is dropped. Spans
/// are whole words, never partial.
std::vector<MaskedSpan> select_spans(const MaskableSequence& seq, const SelectionBudget& budget,
                                     const SpanLengthDistribution& lengths, MaskingRng& rng);

}  // namespace mlm::masking

#include "mlm/masking/masking_collator.h"

#include <stdexcept>
#include <string>

#include "mlm/config/validate_masking.h"
#include "mlm/util/errors.h"

namespace mlm::masking {
namespace {

constexpr int64_t kIgnoreIndex = -100;

void require(bool ok, const std::string& key, const std::string& message) {
  if (!ok) throw ConfigError(key + ": " + message, key);
}

const config::MaskingConfig& validated(const config::MaskingConfig& cfg) {
  config::validate_masking(cfg);  // the rules of the config loader, checked where they live
  return cfg;
}

void check_vocab(const text::VocabInfo& vocab) {
  const std::string size = std::to_string(vocab.size);
  require(vocab.size > 0, "tokenizer", "vocabulary is empty");
  require(static_cast<int64_t>(vocab.is_special.size()) == vocab.size, "tokenizer",
          "vocabulary of " + size + " pieces has " + std::to_string(vocab.is_special.size()) +
              " is_special entries");
  require(static_cast<int64_t>(vocab.starts_word.size()) == vocab.size, "tokenizer",
          "vocabulary of " + size + " pieces has " + std::to_string(vocab.starts_word.size()) +
              " starts_word entries");
  const std::pair<const char*, int32_t> specials[] = {{"[PAD]", vocab.ids.pad},
                                                      {"[UNK]", vocab.ids.unk},
                                                      {"[CLS]", vocab.ids.cls},
                                                      {"[SEP]", vocab.ids.sep},
                                                      {"[MASK]", vocab.ids.mask}};
  for (const auto& [name, id] : specials) {
    require(id >= 0 && id < vocab.size, "tokenizer",
            std::string(name) + " id " + std::to_string(id) + " is outside the vocabulary of " +
                size + " pieces");
  }
}

}  // namespace

MaskingCollator::MaskingCollator(const config::MaskingConfig& cfg, const text::VocabInfo& vocab,
                                 int64_t seq_len, config::Objective objective,
                                 bool with_document_ids)
    : cfg_(validated(cfg)),
      vocab_(vocab),
      seq_len_(seq_len),
      objective_(objective),
      with_document_ids_(with_document_ids),
      span_lengths_(cfg_.span_p, cfg_.max_span) {
  require(seq_len >= 1, "data.seq_len", "must be >= 1, got " + std::to_string(seq_len));
  check_vocab(vocab_);
  for (int64_t id = 0; id < vocab_.size; ++id) {
    if (!vocab_.is_special[static_cast<size_t>(id)] && id != vocab_.ids.pad) {
      non_special_ids_.push_back(static_cast<int32_t>(id));
    }
  }
  require(!non_special_ids_.empty(), "tokenizer",
          "every one of the " + std::to_string(vocab_.size) +
              " vocabulary pieces is special: there is nothing to mask or predict");
}

void MaskingCollator::check_sequence(const data::PackedSequence& sequence) const {
  const std::string where = "masking: sequence with sample_id " +
                            std::to_string(sequence.sample_id);
  const auto length = static_cast<int64_t>(sequence.ids.size());
  if (length > seq_len_) {
    throw std::invalid_argument(where + " has " + std::to_string(length) +
                                " tokens, more than data.seq_len " + std::to_string(seq_len_));
  }
  if (sequence.token_type_ids.size() != sequence.ids.size()) {
    throw std::invalid_argument(where + " has " + std::to_string(length) + " ids but " +
                                std::to_string(sequence.token_type_ids.size()) +
                                " token type ids");
  }
  for (int64_t i = 0; i < length; ++i) {
    const int32_t id = sequence.ids[static_cast<size_t>(i)];
    if (id < 0 || id >= vocab_.size) {
      throw std::invalid_argument(where + ": id " + std::to_string(id) + " at offset " +
                                  std::to_string(i) + " is outside the vocabulary of " +
                                  std::to_string(vocab_.size) + " pieces");
    }
  }
  int64_t previous_start = 0;
  for (int32_t start : sequence.document_starts) {
    if (start <= previous_start || start >= length) {
      throw std::invalid_argument(where + " has a document start at offset " + std::to_string(start) +
                                  " after " + std::to_string(previous_start) + " in " +
                                  std::to_string(length) + " tokens (starts must ascend inside it)");
    }
    previous_start = start;
  }
  if (config::trains_sentence_pairs(objective_) && sequence.nsp_label != 0 &&
      sequence.nsp_label != 1) {
    throw std::invalid_argument(where + " has sentence label " +
                                std::to_string(sequence.nsp_label) + "; objective " +
                                std::string(config::to_string(objective_)) + " needs 0 or 1");
  }
}

std::vector<MaskedSpan> MaskingCollator::select_with(const data::PackedSequence& sequence,
                                                     MaskingRng& rng) const {
  const MaskableSequence seq = find_maskable(sequence.ids, vocab_);
  const SelectionBudget budget =
      draw_budget(static_cast<int64_t>(seq.positions.size()), cfg_, rng);
  switch (cfg_.strategy) {
    case config::MaskingStrategy::token:
      return select_tokens(seq, budget, rng);
    case config::MaskingStrategy::whole_word:
      return select_whole_words(seq, budget, rng);
    case config::MaskingStrategy::span:
      return select_spans(seq, budget, span_lengths_, rng);
  }
  throw std::logic_error("masking: unknown strategy");
}

std::vector<MaskedSpan> MaskingCollator::select(const data::PackedSequence& sequence,
                                                uint64_t seed) const {
  check_sequence(sequence);
  MaskingRng rng = sequence_rng(seed, sequence.sample_id);
  return select_with(sequence, rng);
}

int32_t MaskingCollator::random_token(MaskingRng& rng) const {
  return non_special_ids_[rng.below(non_special_ids_.size())];
}

MaskedBatch MaskingCollator::operator()(const std::vector<data::PackedSequence>& sequences,
                                        uint64_t seed) const {
  const auto rows = static_cast<int64_t>(sequences.size());
  const auto cells = static_cast<size_t>(rows * seq_len_);
  MaskedBatch batch;
  batch.batch_size = rows;
  batch.seq_len = seq_len_;
  batch.input_ids.assign(cells, vocab_.ids.pad);
  batch.token_type_ids.assign(cells, 0);
  batch.attention_mask.assign(cells, 0);
  batch.labels.assign(cells, kIgnoreIndex);
  if (config::trains_sentence_pairs(objective_)) batch.nsp_labels.reserve(sequences.size());
  if (with_document_ids_) batch.document_ids.assign(cells, 0);

  const double mask_p = cfg_.mask_replace_prob;
  const double replace_p = cfg_.mask_replace_prob + cfg_.random_replace_prob;
  const bool per_span = cfg_.strategy == config::MaskingStrategy::span;
  for (int64_t r = 0; r < rows; ++r) {
    const data::PackedSequence& sequence = sequences[static_cast<size_t>(r)];
    check_sequence(sequence);
    const int64_t row = r * seq_len_;
    for (size_t i = 0; i < sequence.ids.size(); ++i) {
      batch.input_ids[row + i] = sequence.ids[i];
      batch.token_type_ids[row + i] = sequence.token_type_ids[i];
      batch.attention_mask[row + i] = 1;
    }
    if (with_document_ids_) {
      int64_t document = 1;
      auto next_start = sequence.document_starts.begin();
      for (size_t i = 0; i < sequence.ids.size(); ++i) {
        if (next_start != sequence.document_starts.end() && static_cast<size_t>(*next_start) == i) {
          ++document;
          ++next_start;
        }
        batch.document_ids[row + i] = document;
      }
    }
    MaskingRng rng = sequence_rng(seed, sequence.sample_id);
    for (const MaskedSpan& span : select_with(sequence, rng)) {
      // Span strategy: one draw for the whole span; otherwise one per position.
      double u = per_span ? rng.uniform() : 0.0;
      for (int32_t pos = span.begin; pos < span.end; ++pos) {
        if (!per_span) u = rng.uniform();
        const int64_t cell = row + pos;
        batch.labels[cell] = sequence.ids[pos];
        batch.masked_positions.push_back(cell);
        if (u < mask_p) {
          batch.input_ids[cell] = vocab_.ids.mask;
        } else if (u < replace_p) {
          batch.input_ids[cell] = random_token(rng);
        }
      }
    }
    if (config::trains_sentence_pairs(objective_)) batch.nsp_labels.push_back(sequence.nsp_label);
  }
  return batch;
}

}  // namespace mlm::masking

#include "mlm/train/tools/bench/synthetic_batch.h"

#include <random>
#include <string>
#include <vector>

#include "mlm/masking/masking_collator.h"
#include "mlm/util/errors.h"

namespace mlm::train::bench {
namespace {

constexpr int64_t kFirstOrdinaryId = 5;  // [PAD] [UNK] [CLS] [SEP] [MASK] come first

}  // namespace

text::VocabInfo synthetic_vocab(int64_t vocab_size) {
  if (vocab_size <= kFirstOrdinaryId) {
    throw ConfigError("model.vocab_size (" + std::to_string(vocab_size) +
                          ") leaves no ordinary token after the 5 special ones; use at least 6",
                      "model.vocab_size");
  }
  text::VocabInfo vocab;
  vocab.size = vocab_size;
  vocab.is_special.assign(static_cast<size_t>(vocab_size), 0);
  vocab.starts_word.assign(static_cast<size_t>(vocab_size), 1);
  for (int64_t id = 0; id < kFirstOrdinaryId; ++id) {
    vocab.is_special[static_cast<size_t>(id)] = 1;
    vocab.starts_word[static_cast<size_t>(id)] = 0;
  }
  return vocab;
}

masking::MaskedBatch make_synthetic_batch(int64_t batch, int64_t seq_len, int64_t vocab_size,
                                          const config::MaskingConfig& masking, uint64_t seed) {
  const auto vocab = synthetic_vocab(vocab_size);
  if (batch <= 0 || seq_len <= 0) {
    throw ConfigError("train.micro_batch_size (" + std::to_string(batch) + ") and data.seq_len (" +
                          std::to_string(seq_len) + ") must be positive",
                      batch <= 0 ? "train.micro_batch_size" : "data.seq_len");
  }
  // Ids drawn here; selection and corruption by the real collator, as the pipeline's batches.
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> ordinary(kFirstOrdinaryId, vocab_size - 1);
  std::vector<data::PackedSequence> rows(static_cast<size_t>(batch));
  for (size_t r = 0; r < rows.size(); ++r) {
    auto& row = rows[r];
    row.ids.resize(static_cast<size_t>(seq_len));
    for (auto& id : row.ids) id = static_cast<int32_t>(ordinary(rng));
    row.token_type_ids.assign(row.ids.size(), 0);
    row.sample_id = r;
  }
  return masking::MaskingCollator(masking, vocab, seq_len, config::Objective::mlm)(rows, seed);
}

}  // namespace mlm::train::bench

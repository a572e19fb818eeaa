#include "mlm/train/app/bench/synthetic_batch.h"

#include <random>
#include <string>

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
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> ordinary(kFirstOrdinaryId, vocab_size - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);

  masking::MaskedBatch out;
  out.batch_size = batch;
  out.seq_len = seq_len;
  const auto n = static_cast<size_t>(batch * seq_len);
  out.input_ids.resize(n);
  out.token_type_ids.assign(n, 0);
  out.attention_mask.assign(n, 1);
  out.labels.assign(n, -100);
  for (size_t i = 0; i < n; ++i) {
    const int64_t id = ordinary(rng);
    out.input_ids[i] = id;
    if (unit(rng) >= masking.mlm_probability) continue;
    out.labels[i] = id;
    out.masked_positions.push_back(static_cast<int64_t>(i));
    const double corruption = unit(rng);
    if (corruption < masking.mask_replace_prob) {
      out.input_ids[i] = text::SpecialIds{}.mask;
    } else if (corruption < masking.mask_replace_prob + masking.random_replace_prob) {
      out.input_ids[i] = ordinary(rng);
    }
  }
  return out;
}

}  // namespace mlm::train::bench

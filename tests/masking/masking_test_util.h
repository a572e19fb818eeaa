#pragma once
// Synthetic vocabularies and sequences for the masking tests: no tokenizer needed.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/masking/masked_batch.h"
#include "mlm/text/vocab_info.h"

namespace mlm::masking::testing {

constexpr int32_t kVocabSize = 1000;
constexpr int32_t kFirstRegularId = 5;  // ids 0-4: [PAD] [UNK] [CLS] [SEP] [MASK]
constexpr int64_t kSeqLen = 128;        // the statistical tests' sequence length

/// ids 0-4 special; a regular piece continues a word when id % 3 == 0, so words have
/// 1, 2, 3, ... pieces (mean 1.5) and single-piece words are common.
inline text::VocabInfo make_vocab(int32_t size = kVocabSize) {
  text::VocabInfo vocab;
  vocab.size = size;
  vocab.is_special.assign(static_cast<size_t>(size), 0);
  vocab.starts_word.assign(static_cast<size_t>(size), 0);
  for (int32_t id = 0; id < size; ++id) {
    vocab.is_special[id] = id < kFirstRegularId;
    vocab.starts_word[id] = id >= kFirstRegularId && id % 3 != 0;
  }
  return vocab;
}

inline bool is_continuation(int32_t id) { return id >= kFirstRegularId && id % 3 == 0; }

/// `count` sequences of at most seq_len tokens: [CLS] A [SEP] (and B [SEP] for every third),
/// lengths varied so padding occurs, about 1% [UNK] (special) inside the text, sample ids
/// first_sample_id, first_sample_id + 1, ....
inline std::vector<data::PackedSequence> make_sequences(int64_t count, int64_t seq_len,
                                                        uint64_t data_seed,
                                                        uint64_t first_sample_id = 0) {
  std::mt19937_64 gen(data_seed);
  std::uniform_int_distribution<int32_t> piece(kFirstRegularId, kVocabSize - 1);
  std::uniform_int_distribution<int64_t> length(seq_len / 2, seq_len);
  std::vector<data::PackedSequence> out;
  for (int64_t s = 0; s < count; ++s) {
    data::PackedSequence seq;
    const int64_t total = length(gen);
    const bool pair = s % 3 == 0;
    const int64_t split = pair ? 1 + (total - 3) / 2 : total - 1;
    seq.ids.push_back(2);
    seq.token_type_ids.push_back(0);
    int8_t type = 0;
    for (int64_t i = 1; i < total - 1; ++i) {
      if (pair && i == split) {
        seq.ids.push_back(3);
        seq.token_type_ids.push_back(0);
        type = 1;
        continue;
      }
      seq.ids.push_back(gen() % 100 == 0 ? 1 : piece(gen));
      seq.token_type_ids.push_back(type);
    }
    seq.ids.push_back(3);
    seq.token_type_ids.push_back(type);
    seq.nsp_label = static_cast<int8_t>(gen() % 2);
    seq.sample_id = first_sample_id + static_cast<uint64_t>(s);
    out.push_back(std::move(seq));
  }
  return out;
}

inline int64_t count_maskable(const data::PackedSequence& seq) {
  int64_t n = 0;
  for (int32_t id : seq.ids) n += id >= kFirstRegularId ? 1 : 0;
  return n;
}

/// Selected positions of row r.
inline int64_t selected_in_row(const MaskedBatch& batch, int64_t r) {
  int64_t k = 0;
  for (int64_t s = 0; s < batch.seq_len; ++s) k += batch.labels[r * batch.seq_len + s] != -100;
  return k;
}

/// Bound for an observed proportion: 4.5 binomial standard deviations (a false failure has
/// probability below 1e-5; the seeds are fixed anyway).
inline double binomial_bound(double p, double n) { return 4.5 * std::sqrt(p * (1 - p) / n); }

}  // namespace mlm::masking::testing

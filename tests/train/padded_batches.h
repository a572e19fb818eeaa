#pragma once
// Collated batches with padding made by hand, for the step's host-read tests: right-padded rows
// of known lengths (so the layers run unpadded), selected positions in every row, and documents
// when asked.
#include <cstdint>
#include <vector>

#include "mlm/masking/masked_batch.h"

namespace mlm::train::testing {

/// Rows of `lengths` tokens padded to `seq`; ids in [5, vocab); every third token selected
/// (labels: the id + 1, wrapped); document_ids (two documents in a row of 8 tokens or more)
/// when `documents`.
inline masking::MaskedBatch padded_batch(const std::vector<int64_t>& lengths, int64_t seq, int64_t vocab,
                                         bool documents = false) {
  masking::MaskedBatch batch;
  batch.batch_size = static_cast<int64_t>(lengths.size());
  batch.seq_len = seq;
  const auto n = static_cast<size_t>(batch.batch_size * seq);
  batch.input_ids.assign(n, 0);
  batch.token_type_ids.assign(n, 0);
  batch.attention_mask.assign(n, 0);
  batch.labels.assign(n, -100);
  if (documents) batch.document_ids.assign(n, 0);
  for (int64_t b = 0; b < batch.batch_size; ++b) {
    const int64_t length = lengths[static_cast<size_t>(b)];
    for (int64_t s = 0; s < length; ++s) {
      const auto i = static_cast<size_t>(b * seq + s);
      batch.input_ids[i] = 5 + (b * 31 + s * 7) % (vocab - 5);
      batch.attention_mask[i] = 1;
      if (documents) batch.document_ids[i] = length >= 8 && s >= length / 2 ? 2 : 1;
      if (s % 3 == 1) {
        batch.labels[i] = (batch.input_ids[i] + 1) % vocab;
        batch.masked_positions.push_back(static_cast<int64_t>(i));
      }
    }
  }
  return batch;
}

}  // namespace mlm::train::testing

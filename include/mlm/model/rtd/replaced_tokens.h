#pragma once
// Replaced-token detection, the pair's task: the generator's samples written into the masked
// positions, the labels (replaced only where a sample differs from the original token), and
// the discriminator's loss and counts over the non-padding tokens.
#include <torch/torch.h>

#include "mlm/model/masked_lm.h"

namespace mlm::model {

struct CorruptedInput {
  torch::Tensor input_ids;  // [B,S] int64: the masked input with the samples in place
  torch::Tensor replaced;   // [B,S] bool: a sample that differs from the original token
};

/// input_ids [B,S] with samples [M] at the flat positions [M], whose original ids are labels [M].
CorruptedInput corrupt(const torch::Tensor& input_ids, const torch::Tensor& positions,
                       const torch::Tensor& labels, const torch::Tensor& samples);

/// Fills out's rtd_* from the discriminator's logits [B,S] against `replaced` [B,S] over the
/// tokens (token_mask [B,S] 1 = token; undefined = every position): binary cross-entropy sum,
/// correct calls, true positives, predicted replaced, replaced; and generator_hits, the
/// samples equal to their labels.
void score_replaced(const torch::Tensor& logits, const CorruptedInput& corrupted,
                    const torch::Tensor& token_mask, const torch::Tensor& samples,
                    const torch::Tensor& labels, MlmOutput& out);

}  // namespace mlm::model

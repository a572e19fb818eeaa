#pragma once
// A collated MaskedBatch (plain arrays) as the model's input tensors on the training device.
#include <torch/torch.h>

#include "mlm/masking/masked_batch.h"
#include "mlm/model/masked_lm.h"

namespace mlm::train {

/// input_ids / token_type_ids / attention_mask [B,S], masked_positions and the labels at
/// them [M], nsp_labels [B] and document_ids [B,S] when the batch has them. The attention
/// mask is left undefined (has_padding = false) for a batch without padding, so the model
/// skips it.
model::MlmInputs to_bert_inputs(const masking::MaskedBatch& batch, const torch::Device& device);

/// Non-padding tokens of a batch (the unit of train.max_tokens and tokens/s).
int64_t count_tokens(const masking::MaskedBatch& batch);

}  // namespace mlm::train

#pragma once
// Evaluation on the validation split: fixed order, masks drawn with eval.seed (so every
// checkpoint is scored on the very same masked tokens), sharded across ranks and summed.
// Masked accuracy counts every selected position (kept and random-replaced ones included).
#include <torch/torch.h>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/masking/validation_batches.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/loop/eval_result.h"

namespace mlm::train {

/// Scores `model` on `batches` on `device`, autocast to `compute_dtype` (train.precision
/// resolved for the device). Leaves the model in the mode it found it in. Collective: every
/// rank calls. The trainer reads its batches once per run and scores them at every
/// evaluation; EvalResult::seconds is the scoring alone.
EvalResult evaluate(model::MaskedLm model, const masking::ValidationBatches& batches,
                    dist::Communicator& comm, const torch::Device& device, torch::Dtype compute_dtype);

/// Reads config.data's valid split (eval.batch_size or train.micro_batch_size sequences per
/// batch, at most eval.max_batches batches in all ranks together) and scores it once.
EvalResult evaluate(model::MaskedLm model, const config::RunConfig& config,
                    const text::Tokenizer& tokenizer, dist::Communicator& comm,
                    const torch::Device& device, torch::Dtype compute_dtype);

}  // namespace mlm::train

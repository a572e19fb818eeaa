#pragma once
// distill.teacher opened for a run: a checkpoint or Hugging Face directory of any registered
// architecture (an ELECTRA/DeBERTa pair teaches through its generator), loaded as mlm-eval
// loads it (tools/saved_model.h), frozen: eval mode (no dropout), no parameter requires a
// gradient, and every pass under NoGradGuard (distiller.h).
#include <torch/torch.h>

#include <cstdint>

#include "mlm/config/run_config.h"
#include "mlm/model/architecture_spec.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train::distill {

struct Teacher {
  model::MaskedLm model{nullptr};
  config::ModelConfig config;            // its directory's
  const model::ArchitectureSpec* spec = nullptr;
  torch::Dtype dtype = torch::kFloat32;  // what its forward autocasts to
};

/// distill.teacher_precision resolved: auto = bf16 where the device is fast in it, i.e. where
/// `auto_dtype` (train.precision auto's dtype on the device, run/device.h) is bf16, else fp32.
torch::Dtype teacher_dtype(const std::string& precision, torch::Dtype auto_dtype);

/// The shape of the network whose forward taps distillation reads: a replaced-token-detection
/// pair's generator (model::generator_config), else the model itself.
config::ModelConfig tapped_shape(const config::ModelConfig& model);

/// Opens config.distill.teacher on `device`. UsageError (exit 2) naming distill.teacher or the
/// file for a missing or damaged directory and for a tokenizer other than the student's
/// (both files named); naming the key for a relation layer outside the teacher's depth, a
/// relation head count that does not split its width, or a cosine/relation loss on an
/// architecture that gives no forward taps (a cosine loss across widths goes through the
/// distiller's projection). A pair's layers, heads and width are its generator's (tapped_shape).
Teacher open_teacher(const config::RunConfig& config, const text::Tokenizer& student_tokenizer,
                     const model::MaskedLm& student, const torch::Device& device, torch::Dtype auto_dtype);

/// A hash of every weight's bytes (FNV-1a): equal before and after training when the teacher
/// was never written (tests).
uint64_t weights_checksum(model::MaskedLm model);

}  // namespace mlm::train::distill

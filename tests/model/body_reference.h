#pragma once
// The reference-parity cases of every registered architecture's body (body_reference_test.cpp
// runs them; body_reference_cases.cpp holds them): what differs per architecture is how its
// model is shaped and randomised, the batch it is given and where the reference comes from;
// the comparison is one.
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mlm/model/masked_lm.h"

namespace mlm::model::body_reference {

/// One case computed: the model (in training mode, dropouts 0), its inputs and the reference's
/// numbers for them: logits [M, V], loss_sum, correct, grad.<HF key> of the gradients after
/// backward of loss_sum / M (+ nsp_loss_sum / B with nsp_loss_sum and nsp_correct).
struct ReferenceRun {
  MaskedLm model{nullptr};
  MlmInputs in;
  std::map<std::string, torch::Tensor> ref;
};

struct BodyCase {
  std::string name;
  /// Builds the model and computes the reference, scratch files in `dir`.
  std::function<ReferenceRun(const std::filesystem::path& dir)> run;
};

enum class GradientTolerance {
  absolute,             // |difference| <= 1e-4
  relative_to_largest,  // <= 1e-4 x the tensor's largest magnitude (a key bias's: both below 1e-6)
};

/// What one registered architecture's body is held to.
struct BodyReference {
  std::vector<BodyCase> cases;  // empty: `elsewhere` says where its body's parity is tested
  GradientTolerance gradients = GradientTolerance::absolute;
  /// The architecture's own checks once the gradients are compared (`checked` of them): how many
  /// there must be, rows that must have none; `dir` holds what the case wrote.
  std::function<void(ReferenceRun& run, int checked, const std::filesystem::path& dir)> after_gradients;
  std::string elsewhere;
};

/// Keyed by model.architecture's value (the registered name).
const std::map<std::string, BodyReference>& body_references();

}  // namespace mlm::model::body_reference

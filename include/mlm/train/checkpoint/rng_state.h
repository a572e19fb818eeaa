#pragma once
// Every random-number state a training process owns, as a JSON value a checkpoint can store:
// LibTorch's default CPU generator (dropout) and, when there are GPUs, each CUDA generator.
// Masking and data order need none: they are pure functions of seeds and positions.
#include <nlohmann/json.hpp>

namespace mlm::train {

nlohmann::json capture_rng_state();

/// Throws CheckpointError (naming `origin`) when the value is not a captured state.
void restore_rng_state(const nlohmann::json& state, const std::string& origin);

}  // namespace mlm::train

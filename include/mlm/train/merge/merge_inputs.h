#pragma once
// The inputs of a merge resolved to Hugging Face directories whose weights stream tensor by
// tensor (a single model.safetensors per network): a run directory expands to its last N
// complete checkpoints; a checkpoint, a pytorch_model.bin or a sharded directory is exported
// (mlm-export's code) into the staging directory first, one model in memory at a time.
#include <filesystem>
#include <string>
#include <vector>

#include "mlm/train/merge/merge_spec.h"

namespace mlm::train::merge {

struct ResolvedInput {
  std::string label;             // as the user named it (a checkpoint of a run: its directory)
  std::filesystem::path source;  // the directory as given (what --eval opens)
  std::filesystem::path dir;     // the streamable directory (source, or its export in staging)
  double weight = 1.0;
  double density = 1.0;
};

struct ResolvedInputs {
  std::vector<ResolvedInput> models;
  std::optional<ResolvedInput> base;  // task_arithmetic, ties; slerp: the model t = 0 gives
  std::vector<std::string> networks;  // "" for one model; "generator", "discriminator" of a pair
};

/// The complete checkpoints of `run_dir`/checkpoints, oldest first. UsageError when there are
/// none.
std::vector<std::filesystem::path> run_checkpoints(const std::filesystem::path& run_dir);

/// Expands, checks and stages the spec's models and base (staging: a fresh directory).
/// UsageError naming the input for a missing directory, a damaged file or too few checkpoints.
ResolvedInputs resolve_inputs(const MergeSpec& spec, const std::filesystem::path& staging);

}  // namespace mlm::train::merge

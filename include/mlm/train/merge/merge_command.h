#pragma once
// mlm-merge: checkpoints or Hugging Face directories of one architecture, shape and tokenizer
// merged tensor by tensor into a Hugging Face directory (what transformers loads and
// model.init_from continues), and, with an eval config, each input and the result scored.
// Torch-free, for the main.
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"
#include "mlm/model/hf/weight_format.h"
#include "mlm/train/merge/merge_spec.h"

namespace mlm::train::merge {

struct MergeRequest {
  MergeSpec spec;
  std::filesystem::path output;  // must not exist, or be an empty directory
  model::WeightFormat format = model::WeightFormat::safetensors;
  std::optional<config::RunConfig> eval_config;  // --eval: score the inputs and the result
};

/// Merges and, with eval_config, scores; returns the report (the merge, and the eval table)
/// and prints the table. UsageError (exit 2) for a bad spec or input: one line naming the
/// input and the reason, and no output directory left behind (everything is written into a
/// temporary directory beside the output and renamed at the end).
nlohmann::json run_merge(const MergeRequest& request);

}  // namespace mlm::train::merge

#pragma once
// mlm-merge --eval: each input and the result scored alike, on the config's validation split
// (mlm-eval's evaluation) and, when it names eval.probes, on the probe suite over its seeds.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"

namespace mlm::train::merge {

/// Scores each (label, directory) and returns the rows as JSON: label, masked_accuracy,
/// mlm_loss, perplexity, num_masked and, with probes, each probe's validation (and test) mean,
/// standard deviation and per-seed values.
nlohmann::json score_models(const config::RunConfig& config,
                            const std::vector<std::pair<std::string, std::filesystem::path>>& models);

/// The rows as one aligned text table.
std::string format_score_table(const nlohmann::json& rows);

}  // namespace mlm::train::merge

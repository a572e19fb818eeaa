#pragma once
// mlm-eval --pll / --minimal-pairs: pseudo-log-likelihood scores of a checkpoint or a Hugging
// Face directory (train/likelihood/), behind a header without LibTorch for the main.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"

namespace mlm::train {

struct PllRequest {
  std::string sentences_file;      // --pll: "" for none
  std::string minimal_pairs_file;  // --minimal-pairs: "" for none
  std::string variant = "original";
  int64_t max_items = 0;  // the first N sentences / pairs of each file (0 = all)
  int64_t threads = 0;    // intra-op threads (0 = LibTorch's default: the cores)
};

/// Opens `dir` as mlm-eval does (config gives what the directory lacks: the tokenizer) and
/// scores the request's files in fp32 on the CPU: {"checkpoint", "pll": PllCorpusScore's JSON
/// with per-sentence scores, "minimal_pairs": MinimalPairsScore's JSON with per-pair scores},
/// each only when its file is given. Every file is read and checked before a sentence is
/// scored; DataError (exit 2) naming file and line for a bad one.
nlohmann::json score_pseudo_likelihood(const config::RunConfig& config, const std::filesystem::path& dir,
                                       const PllRequest& request);

}  // namespace mlm::train

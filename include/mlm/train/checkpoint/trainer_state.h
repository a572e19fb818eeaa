#pragma once
// trainer_state.json: everything besides weights and optimizer moments that a resumed run
// needs to continue exactly (step, tokens, every rank's data position and RNG state).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlm::train {

struct RankState {
  nlohmann::json data_position;  // mlm::data::DataPosition::to_json() of that rank
  nlohmann::json rng;            // capture_rng_state() of that rank
};

/// fp16's dynamic loss scale (loss_scaler.h) as a checkpoint holds it.
struct LossScaleState {
  double scale = 65536;
  int64_t growth_tracker = 0;  // steps without overflow since the scale last changed
};

struct TrainerState {
  int64_t step = 0;                  // optimizer steps done (skipped ones included)
  int64_t tokens_seen = 0;           // non-padding tokens trained on, all ranks
  int64_t skipped_steps = 0;         // non-finite steps skipped in total
  int64_t consecutive_skipped = 0;   // ... in a row at the time of the checkpoint
  double train_time_s = 0;           // wall-clock time spent training, all runs together
  int64_t phase = 0;                 // the phase trained (phases:; 0 for an unphased run)
  std::string phase_name;            // its name ("" for an unphased run)
  int64_t phase_start_step = 0;      // the step and tokens seen when that phase began
  int64_t phase_start_tokens = 0;
  int world_size = 1;
  std::string config_hash;           // of the resolved config (informational)
  std::optional<LossScaleState> loss_scale;  // fp16 runs only
  std::vector<RankState> ranks;      // indexed by rank

  nlohmann::json to_json() const;
  /// Throws CheckpointError naming `origin` for a missing or mistyped field.
  static TrainerState from_json(const nlohmann::json& json, const std::string& origin);

  /// Reads and parses a trainer_state.json; CheckpointError names the file.
  static TrainerState load(const std::filesystem::path& path);
};

}  // namespace mlm::train

#include "mlm/train/checkpoint/trainer_state.h"

#include <cmath>
#include <cstdio>

#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/util/errors.h"

namespace mlm::train {

nlohmann::json TrainerState::to_json() const {
  nlohmann::json json;
  json["format"] = 1;
  json["step"] = step;
  json["tokens_seen"] = tokens_seen;
  json["skipped_steps"] = skipped_steps;
  json["consecutive_skipped"] = consecutive_skipped;
  json["train_time_s"] = train_time_s;
  json["world_size"] = world_size;
  json["phase"] = phase;
  json["phase_name"] = phase_name;
  json["phase_start_step"] = phase_start_step;
  json["phase_start_tokens"] = phase_start_tokens;
  json["config_hash"] = config_hash;
  if (loss_scale) {
    json["loss_scale"] = {{"scale", loss_scale->scale}, {"growth_tracker", loss_scale->growth_tracker}};
  }
  auto& ranks_json = json["ranks"];
  ranks_json = nlohmann::json::array();
  for (const auto& rank : ranks) {
    ranks_json.push_back({{"data_position", rank.data_position}, {"rng", rank.rng}});
  }
  return json;
}

TrainerState TrainerState::from_json(const nlohmann::json& json, const std::string& origin) {
  TrainerState state;
  try {
    state.step = json.at("step").get<int64_t>();
    state.tokens_seen = json.at("tokens_seen").get<int64_t>();
    state.skipped_steps = json.value("skipped_steps", int64_t{0});
    state.consecutive_skipped = json.value("consecutive_skipped", int64_t{0});
    state.train_time_s = json.value("train_time_s", 0.0);
    state.world_size = json.at("world_size").get<int>();
    // Checkpoints written before phases existed are of an unphased run.
    state.phase = json.value("phase", int64_t{0});
    state.phase_name = json.value("phase_name", std::string{});
    state.phase_start_step = json.value("phase_start_step", int64_t{0});
    state.phase_start_tokens = json.value("phase_start_tokens", int64_t{0});
    state.config_hash = json.value("config_hash", std::string{});
    if (json.contains("loss_scale")) {
      const auto& scale = json.at("loss_scale");
      state.loss_scale = LossScaleState{scale.at("scale").get<double>(), scale.at("growth_tracker").get<int64_t>()};
    }
    for (const auto& rank : json.at("ranks")) {
      state.ranks.push_back({rank.at("data_position"), rank.at("rng")});
    }
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(origin + ": " + e.what());
  }
  if (state.loss_scale && !(state.loss_scale->scale > 0 && std::isfinite(state.loss_scale->scale) &&
                            state.loss_scale->growth_tracker >= 0)) {
    throw CheckpointError(origin + ": bad loss_scale (scale " + std::to_string(state.loss_scale->scale) +
                          ", growth_tracker " + std::to_string(state.loss_scale->growth_tracker) + ")");
  }
  if (state.step < 0 || state.world_size < 1 || state.phase < 0 ||
      static_cast<int>(state.ranks.size()) != state.world_size) {
    throw CheckpointError(origin + ": inconsistent state (step " + std::to_string(state.step) +
                          ", world_size " + std::to_string(state.world_size) + ", " +
                          std::to_string(state.ranks.size()) + " rank entries)");
  }
  return state;
}

TrainerState TrainerState::load(const std::filesystem::path& path) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(read_file_bytes(path));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(path.string() + " is not valid JSON: " + e.what());
  }
  return from_json(json, path.string());
}

}  // namespace mlm::train

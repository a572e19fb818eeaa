#include "mlm/config/phases.h"

#include <set>

#include "key_setting.h"
#include "mlm/config/architecture_keys.h"
#include "mlm/config/validate.h"
#include "mlm/util/errors.h"
#include "mlm/util/splitmix64.h"

namespace mlm::config {
namespace {

std::string phase_path(int64_t index) { return "phases[" + std::to_string(index) + "]"; }

// The architecture whose phase_keys() list `key` ("model.global_rope_theta": modernbert, whose
// RoPE bases a longer-context phase raises), or nullptr.
const ArchitectureKeys* phase_key_owner(const std::string& key) {
  if (!key.starts_with("model.")) return nullptr;
  const std::string field = key.substr(6);
  for (const auto* keys : registered_architecture_keys())
    for (const auto& free_key : keys->phase_keys().keys)
      if (free_key == field) return keys;
  return nullptr;
}

// Why `key` cannot differ between phases, or "" when it may. The weights' shapes and meaning,
// the tokenizer, where the run lives and how it is launched are the run's; the run's stop
// conditions stay caps over all phases (a phase ends after its own steps or tokens).
std::string why_fixed(const std::string& key) {
  if (phase_key_owner(key) || key == "model.activation_checkpointing") return "";
  if (key.starts_with("model.")) return "the model is built once for the whole run";
  if (key.starts_with("tokenizer.")) return "the tokenizer is the run's";
  if (key.starts_with("distributed.")) return "the processes are launched once for the run";
  if (key.starts_with("distill.")) return "the teacher and its losses are set once for the whole run";
  static const std::set<std::string> kRunKeys = {
      "train.output_dir", "train.resume", "train.device", "train.precision", "train.threads",
      "train.seed", "train.max_skipped_steps", "train.loss_scale_init", "train.loss_scale_growth_interval",
      "train.ema_start_step"};
  if (kRunKeys.count(key)) return "it is set once for the whole run";
  if (key == "train.max_steps" || key == "train.max_tokens" || key == "train.max_time_s") {
    return "it caps the whole run; a phase ends after its own 'steps' or 'tokens'";
  }
  return "";
}

bool is_learning_rate_key(const std::string& key) {
  return key == "optim.learning_rate" || key.starts_with("schedule.");
}

// Mixes the phase index into the seed: the index-th value of the SplitMix64 stream from the
// seed (the stream's step adds the golden ratio once more, hence index - 1, in wrapping
// unsigned arithmetic), kept non-negative as train.seed must be.
int64_t phase_seed(int64_t seed, int64_t index) {
  constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // SplitMix64's increment
  const uint64_t state = static_cast<uint64_t>(seed) + kGolden * (static_cast<uint64_t>(index) - 1);
  return static_cast<int64_t>(splitmix64(state) >> 1);
}

}  // namespace

int64_t phase_count(const RunConfig& run) {
  return run.phases.empty() ? 1 : static_cast<int64_t>(run.phases.size());
}

std::string phase_name(const RunConfig& run, int64_t index) {
  return run.phases.empty() ? "" : run.phases.at(static_cast<size_t>(index)).name;
}

RunConfig phase_config(const RunConfig& run, int64_t index) {
  RunConfig config = run;
  if (run.phases.empty()) return config;
  const auto& phase = run.phases.at(static_cast<size_t>(index));
  for (const auto& [key, value] : phase.set.entries) {
    detail::apply_key_setting(config, key, value, phase_path(index) + ".set." + key);
  }
  if (index > 0) config.train.seed = phase_seed(run.train.seed, index);
  return config;
}

int64_t steps_for_tokens(const RunConfig& config, int world_size, int64_t tokens) {
  const int64_t per_step =
      config.train.micro_batch_size * config.train.grad_accum_steps * world_size * config.data.seq_len;
  return (tokens + per_step - 1) / per_step;
}

int64_t phase_steps(const RunConfig& run, int64_t index, int world_size) {
  if (run.phases.empty()) {
    if (run.train.max_steps > 0) return run.train.max_steps;
    return run.train.max_tokens > 0 ? steps_for_tokens(run, world_size, run.train.max_tokens) : 0;
  }
  const auto& phase = run.phases.at(static_cast<size_t>(index));
  if (phase.steps > 0) return phase.steps;
  return steps_for_tokens(phase_config(run, index), world_size, phase.tokens);
}

void validate_phases(const RunConfig& run, const std::string& origin) {
  std::set<std::string> names;
  for (int64_t i = 0; i < static_cast<int64_t>(run.phases.size()); ++i) {
    const auto& phase = run.phases[static_cast<size_t>(i)];
    const std::string path = phase_path(i);
    auto fail = [&](const std::string& key, const std::string& message) {
      throw ConfigError(origin + ": " + key + ": " + message, key);
    };
    if (phase.name.empty()) fail(path + ".name", "every phase needs a name (it labels the metrics rows)");
    if (!names.insert(phase.name).second) fail(path + ".name", "'" + phase.name + "' names two phases");
    if ((phase.steps > 0) == (phase.tokens > 0) || phase.steps < 0 || phase.tokens < 0) {
      fail(path, "give the phase's length as exactly one of steps or tokens (> 0)");
    }
    for (const auto& [key, value] : phase.set.entries) {
      const std::string where = path + ".set." + key;
      if (const auto why = why_fixed(key); !why.empty()) {
        fail(where, "cannot change between phases: " + why);
      }
      if (const auto* owner = phase_key_owner(key); owner && owner->architecture() != run.model.architecture) {
        fail(where, owner->phase_keys().what + " belong to " + std::string(to_string(owner->architecture())) +
                        "; model.architecture is " + std::string(to_string(run.model.architecture)));
      }
      if (phase.lr_schedule == PhaseSchedule::continue_run && is_learning_rate_key(key)) {
        fail(where, "a phase with lr_schedule: continue follows the run's learning-rate "
                    "schedule; give it lr_schedule: restart to set its own");
      }
    }
    RunConfig resolved;
    try {
      resolved = phase_config(run, i);
      validate_config(resolved);
    } catch (const ConfigError& e) {
      throw ConfigError(origin + ": " + path + ": " + e.what(), path + ".set." + e.key());
    }
    // One EMA spans the run's phases: a phase may change its decay, not switch it on or off.
    if ((resolved.train.ema_decay > 0) != (run.train.ema_decay > 0)) {
      fail(path + ".set.train.ema_decay",
           "cannot switch the EMA on or off in a phase (one EMA spans the run's phases): set "
           "train.ema_decay > 0 for the run; a phase may change its value");
    }
  }
}

}  // namespace mlm::config

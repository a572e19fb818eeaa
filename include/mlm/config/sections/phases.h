#pragma once
// The phases: list: a run in several parts, each overriding the keys it names (sequence
// length, batch, learning-rate schedule, masking rate, RoPE theta, data sources...) and ending
// after its own steps or tokens, as published recipes train (BERT 128 -> 512 tokens; ModernBERT
// pretraining -> context extension -> decay). config/phases.h resolves a phase's config.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mlm/config/enums.h"

namespace mlm::config {

/// A phase's `set:` map, "section.key" -> the value's YAML text (flow style), in file order;
/// applied exactly as `--set section.key=value` would be.
struct KeySettings {
  std::vector<std::pair<std::string, std::string>> entries;
  bool operator==(const KeySettings&) const = default;
};

struct PhaseConfig {
  std::string name;                        // shown in the log and in every metrics.jsonl row
  int64_t steps = 0;                       // optimizer steps of this phase (or tokens)
  int64_t tokens = 0;                      // non-padding tokens of this phase, all ranks
  PhaseOptimizer optimizer = PhaseOptimizer::carry;  // carry the moments over | reset them
  PhaseSchedule lr_schedule = PhaseSchedule::continue_run;  // continue: the run's schedule,
                                           // by the run's step over all phases' steps;
                                           // restart: this phase's schedule.* and
                                           // optim.learning_rate over its own steps
  KeySettings set;                         // the keys this phase overrides

  template <class V>
  void visit(V& v) {
    v("name", name);
    v("steps", steps);
    v("tokens", tokens);
    v("optimizer", optimizer);
    v("lr_schedule", lr_schedule);
    v("set", set);
  }
};

}  // namespace mlm::config

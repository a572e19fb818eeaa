#pragma once
// The probes the loop runs at its evaluations (eval.probes). The loop decides when
// (eval.probe_every_steps, on the main rank); what a probe does, fine-tuning a copy of the
// run's weights on a downstream task, lives above the loop in finetune/, and the run's
// assembly (run/trainer.cpp) wires the two together, so the loop never includes finetune/.
#include <functional>
#include <vector>

#include "mlm/train/loop/probe_score.h"

namespace mlm::train {

/// Scores the run's current weights on every probe task; empty when the run has no probes.
using RunProbes = std::function<std::vector<ProbeScore>()>;

}  // namespace mlm::train

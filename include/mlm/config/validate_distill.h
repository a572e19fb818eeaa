#pragma once
// The distill.* section's own rules (those that need no teacher loaded; the teacher's depth,
// width, heads and tokenizer are checked when it is opened, train/distill/teacher.h).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/sections/distill.h"
#include "mlm/config/sections/model.h"

namespace mlm::config {

/// ConfigError naming the key for a weight < 0, a temperature <= 0, no loss weighted, an
/// unknown teacher_precision, init_every < 0 or beside init_layers, an init_layers entry that
/// is not a non-negative integer or a list whose length is not model.num_hidden_layers.
void validate_distill(const DistillConfig& distill, const ModelConfig& student);

/// distill.init_layers as integers (validated).
std::vector<int64_t> distill_init_layers(const DistillConfig& distill);

}  // namespace mlm::config

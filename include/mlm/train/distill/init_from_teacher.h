#pragma once
// DistilBERT's initialisation: a shallower student of the teacher's architecture and width
// takes the teacher's weights, student layer i from teacher layer layers[i] (every k-th:
// 0, k, 2k, ...), and every other tensor (embeddings, final norm, MLM head) where the shapes
// match.
#include <cstdint>
#include <vector>

#include "mlm/config/sections/distill.h"
#include "mlm/model/architecture_spec.h"
#include "mlm/model/masked_lm.h"

namespace mlm::train::distill {

/// The teacher layers distill.init_every / distill.init_layers name for a student of
/// `student_layers` (empty: no init). UsageError naming the key for a layer outside
/// `teacher_layers`.
std::vector<int64_t> init_layer_map(const config::DistillConfig& distill, int64_t student_layers,
                                    int64_t teacher_layers);

/// Copies the teacher's weights into the student as above. UsageError naming
/// distill.init_every for another architecture or width; returns the tensors copied.
int64_t init_from_teacher(model::MaskedLm student, model::MaskedLm teacher, const model::ArchitectureSpec& spec,
                          const std::vector<int64_t>& layers);

}  // namespace mlm::train::distill

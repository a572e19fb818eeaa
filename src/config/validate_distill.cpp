#include "mlm/config/validate_distill.h"

#include <cmath>

#include "mlm/config/value_checks.h"
#include "mlm/util/errors.h"

namespace mlm::config {

std::vector<int64_t> distill_init_layers(const DistillConfig& distill) {
  std::vector<int64_t> layers;
  for (size_t i = 0; i < distill.init_layers.size(); ++i) {
    const auto& text = distill.init_layers[i];
    size_t used = 0;
    int64_t value = -1;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size() || value < 0) {
      throw ConfigError("distill.init_layers: item " + std::to_string(i + 1) + " '" + text +
                            "' is not a teacher layer number (0, 1, ...)",
                        "distill.init_layers");
    }
    layers.push_back(value);
  }
  return layers;
}

void validate_distill(const DistillConfig& distill, const ModelConfig& student) {
  if (!distill.enabled()) return;
  using checks::non_negative;
  non_negative("distill.mlm_weight", distill.mlm_weight);
  non_negative("distill.kl_weight", distill.kl_weight);
  non_negative("distill.cos_weight", distill.cos_weight);
  non_negative("distill.relation_weight", distill.relation_weight);
  checks::positive("distill.temperature", distill.temperature, " (DistilBERT: 2)");
  if (distill.mlm_weight + distill.kl_weight + distill.cos_weight + distill.relation_weight <= 0) {
    throw ConfigError("distill.kl_weight: every distillation loss weight is 0; give at least one", "distill.kl_weight");
  }
  if (distill.relation_heads < 0) checks::fail("distill.relation_heads", std::to_string(distill.relation_heads),
                                               "must be >= 0 (0 = the teacher's attention heads)");
  for (const auto* key : {"teacher_layer", "student_layer"}) {
    const int64_t value = std::string(key) == "teacher_layer" ? distill.teacher_layer : distill.student_layer;
    if (value < -1) checks::fail(std::string("distill.") + key, std::to_string(value), "must be a layer number or -1 (the last)");
  }
  if (distill.relation_heads > 0 && distill.relation_weight > 0 && student.hidden_size % distill.relation_heads != 0) {
    throw ConfigError("distill.relation_heads: " + std::to_string(distill.relation_heads) +
                          " relation heads do not split the student's model.hidden_size " +
                          std::to_string(student.hidden_size),
                      "distill.relation_heads");
  }
  if (distill.student_layer >= student.num_hidden_layers) {
    throw ConfigError("distill.student_layer: " + std::to_string(distill.student_layer) +
                          " is outside the student's " + std::to_string(student.num_hidden_layers) + " layers",
                      "distill.student_layer");
  }
  if (distill.teacher_precision != "auto" && distill.teacher_precision != "fp32" && distill.teacher_precision != "bf16") {
    checks::fail("distill.teacher_precision", "'" + distill.teacher_precision + "'", "must be auto, fp32 or bf16");
  }
  if (distill.init_every < 0) checks::fail("distill.init_every", std::to_string(distill.init_every), "must be >= 0 (0 = no init)");
  const auto layers = distill_init_layers(distill);
  if (distill.init_every > 0 && !layers.empty()) {
    throw ConfigError("distill.init_layers: give distill.init_every or distill.init_layers, not both", "distill.init_layers");
  }
  if (!layers.empty() && static_cast<int64_t>(layers.size()) != student.num_hidden_layers) {
    throw ConfigError("distill.init_layers: " + std::to_string(layers.size()) + " teacher layers for a student of " +
                          std::to_string(student.num_hidden_layers) + " (model.num_hidden_layers)",
                      "distill.init_layers");
  }
}

}  // namespace mlm::config

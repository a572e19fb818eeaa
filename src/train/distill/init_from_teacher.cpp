#include "mlm/train/distill/init_from_teacher.h"

#include <map>
#include <regex>

#include "mlm/config/validate_distill.h"
#include "mlm/util/errors.h"

namespace mlm::train::distill {

std::vector<int64_t> init_layer_map(const config::DistillConfig& distill, int64_t student_layers,
                                    int64_t teacher_layers) {
  std::vector<int64_t> layers = config::distill_init_layers(distill);
  std::string key = "distill.init_layers";
  if (distill.init_every > 0) {
    key = "distill.init_every";
    for (int64_t i = 0; i < student_layers; ++i) layers.push_back(i * distill.init_every);
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i] >= teacher_layers) {
      throw UsageError(key + ": student layer " + std::to_string(i) + " would come from teacher layer " +
                       std::to_string(layers[i]) + ", outside the teacher's " + std::to_string(teacher_layers) +
                       " layers (0-" + std::to_string(teacher_layers - 1) + ")");
    }
  }
  return layers;
}

int64_t init_from_teacher(model::MaskedLm student, model::MaskedLm teacher, const model::ArchitectureSpec& spec,
                          const std::vector<int64_t>& layers) {
  const auto& s = student->config();
  const auto& t = teacher->config();
  if (s.architecture != t.architecture || s.hidden_size != t.hidden_size) {
    throw UsageError("distill.init_every: initialising from the teacher needs its architecture and width (teacher " +
                     std::string(config::to_string(t.architecture)) + " " + std::to_string(t.hidden_size) +
                     ", student " + std::string(config::to_string(s.architecture)) + " " +
                     std::to_string(s.hidden_size) + ")");
  }
  const std::regex layer_key(spec.layer_key_pattern());
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : teacher->hf_state_dict()) source.emplace(key, tensor);

  int64_t copied = 0;
  model::TensorDict state;
  for (const auto& [key, tensor] : student->hf_state_dict()) {
    // A layer's key names the teacher layer it comes from; the rest keep their names.
    std::string from = key;
    std::smatch match;
    if (std::regex_search(key, match, layer_key)) {
      const auto layer = std::stoll(match[1].str());
      const auto number = match.position(1);
      from = key.substr(0, static_cast<size_t>(number)) + std::to_string(layers.at(static_cast<size_t>(layer))) +
             key.substr(static_cast<size_t>(number + match.length(1)));
    }
    const auto it = source.find(from);
    if (it != source.end() && it->second.sizes() == tensor.sizes()) {
      state.emplace_back(key, it->second.detach().clone());
      ++copied;
    } else {
      state.emplace_back(key, tensor.detach().clone());  // e.g. a layer norm the student layer has alone
    }
  }
  student->load_hf_state_dict(state, "distill.teacher");
  return copied;
}

}  // namespace mlm::train::distill

#include "mlm/train/distill/teacher.h"

#include <filesystem>
#include <optional>

#include "mlm/model/architectures.h"
#include "mlm/model/rtd/rtd_networks.h"
#include "mlm/train/checkpoint/saved_model.h"
#include "mlm/util/errors.h"

namespace mlm::train::distill {
namespace {

std::string tokenizer_file(const text::Tokenizer& tokenizer) {
  return tokenizer.model_path().empty() ? std::string("(a tokenizer built in memory)") : tokenizer.model_path();
}

// The losses that read inside the forward pass need both models to fill ForwardTaps.
void require_taps(const config::DistillConfig& d, const model::ArchitectureSpec& spec, const char* whose) {
  if (spec.fills_forward_taps()) return;
  const char* key = d.relation_weight > 0 ? "distill.relation_weight" : "distill.cos_weight";
  throw UsageError(std::string(key) + ": the " + whose + "'s architecture " + spec.display_name() +
                   " gives no hidden states or attention projections to distill; use distill.kl_weight alone");
}

void check_relations(const config::DistillConfig& d, const config::ModelConfig& teacher,
                     const config::ModelConfig& student) {
  if (d.teacher_layer >= teacher.num_hidden_layers) {
    throw UsageError("distill.teacher_layer: " + std::to_string(d.teacher_layer) + " is outside the teacher's " +
                     std::to_string(teacher.num_hidden_layers) + " layers");
  }
  if (d.student_layer >= student.num_hidden_layers) {
    throw UsageError("distill.student_layer: " + std::to_string(d.student_layer) + " is outside the student's " +
                     std::to_string(student.num_hidden_layers) + " layers");
  }
  const int64_t heads = d.relation_heads > 0 ? d.relation_heads : teacher.num_attention_heads;
  for (const auto* model : {&teacher, &student}) {
    if (model->hidden_size % heads != 0) {
      throw UsageError("distill.relation_heads: " + std::to_string(heads) + " relation heads do not split the " +
                       (model == &teacher ? "teacher" : "student") + "'s hidden size " +
                       std::to_string(model->hidden_size) + "; give a divisor of both widths");
    }
  }
}

}  // namespace

config::ModelConfig tapped_shape(const config::ModelConfig& model) {
  return model.objective == config::Objective::rtd ? model::generator_config(model) : model;
}

torch::Dtype teacher_dtype(const std::string& precision, torch::Dtype auto_dtype) {
  if (precision == "fp32") return torch::kFloat32;
  if (precision == "bf16") return torch::kBFloat16;
  return auto_dtype == torch::kBFloat16 ? torch::kBFloat16 : torch::kFloat32;
}

Teacher open_teacher(const config::RunConfig& config, const text::Tokenizer& student_tokenizer,
                     const model::MaskedLm& student, const torch::Device& device, torch::Dtype auto_dtype) {
  const auto& d = config.distill;
  // The vocabulary first: a teacher of another tokenizer fails here, not on its weights' shapes.
  const auto same_tokenizer = [&](const text::Tokenizer& tokenizer) {
    if (tokenizer.serialized_model() != student_tokenizer.serialized_model()) {
      throw UsageError("distill.teacher: the teacher's tokenizer " + tokenizer_file(tokenizer) +
                       " differs from the student's " + tokenizer_file(student_tokenizer) +
                       "; teacher and student must share one vocabulary");
    }
  };
  if (!std::filesystem::is_directory(d.teacher)) {
    throw UsageError("distill.teacher: '" + d.teacher + "' is not a model directory (a checkpoint or a Hugging Face "
                     "model directory)");
  }
  std::optional<SavedModel> saved;
  try {
    saved.emplace(open_saved_model(d.teacher, config, same_tokenizer));
  } catch (const UsageError& e) {
    if (std::string(e.what()).rfind("distill.teacher", 0) == 0) throw;
    throw UsageError(std::string("distill.teacher: ") + e.what());
  } catch (const CheckpointError& e) {
    throw UsageError(std::string("distill.teacher: ") + e.what());
  } catch (const ConfigError& e) {
    throw UsageError(std::string("distill.teacher: ") + e.what());
  }
  Teacher teacher;
  teacher.model = saved->model;
  teacher.config = saved->model_config;
  teacher.spec = &model::architecture_spec(teacher.config.architecture);
  if (teacher.model->vocab_size() != student->vocab_size()) {
    throw UsageError("distill.teacher: the teacher scores " + std::to_string(teacher.model->vocab_size()) +
                     " tokens, the student " + std::to_string(student->vocab_size()));
  }
  if (d.cos_weight > 0 || d.relation_weight > 0) {
    require_taps(d, *teacher.spec, "teacher");
    require_taps(d, model::architecture_spec(student->config().architecture), "student");
  }
  if (d.relation_weight > 0) check_relations(d, tapped_shape(teacher.config), tapped_shape(student->config()));

  teacher.model->to(device);
  teacher.model->eval();
  for (auto& p : teacher.model->parameters()) p.requires_grad_(false);
  teacher.dtype = teacher_dtype(d.teacher_precision, auto_dtype);
  return teacher;
}

uint64_t weights_checksum(model::MaskedLm model) {
  // FNV-1a over every parameter's bytes, in registration order: any changed bit shows.
  uint64_t hash = 1469598103934665603ULL;
  for (const auto& p : model->parameters()) {
    const auto bytes = p.detach().cpu().contiguous();
    const auto* data = static_cast<const unsigned char*>(bytes.data_ptr());
    for (size_t i = 0; i < bytes.nbytes(); ++i) hash = (hash ^ data[i]) * 1099511628211ULL;
  }
  return hash;
}

}  // namespace mlm::train::distill

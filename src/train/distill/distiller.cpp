#include "mlm/train/distill/distiller.h"

#include <torch/cuda.h>

#include "mlm/train/distill/distill_losses.h"
#include "mlm/train/distill/init_from_teacher.h"
#include "mlm/train/loop/autocast.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/logging.h"

namespace mlm::train::distill {
namespace {

// Points a model's taps at `taps` for one forward pass (nullptr: none asked).
class TapsScope {
 public:
  TapsScope(model::MaskedLm model, model::ForwardTaps* taps) : model_(std::move(model)) { model_->taps = taps; }
  ~TapsScope() { model_->taps = nullptr; }
  TapsScope(const TapsScope&) = delete;
  TapsScope& operator=(const TapsScope&) = delete;

 private:
  model::MaskedLm model_;
};

int64_t resolve_layer(int64_t layer, int64_t layers) { return layer < 0 ? layers - 1 : layer; }

}  // namespace

Distiller::Distiller(const config::DistillConfig& config, Teacher teacher, const model::MaskedLm& student,
                     torch::Dtype student_dtype)
    : config_(config),
      teacher_(std::move(teacher)),
      student_dtype_(student_dtype),
      teacher_layer_(resolve_layer(config.teacher_layer, tapped_shape(teacher_.config).num_hidden_layers)),
      student_layer_(resolve_layer(config.student_layer, tapped_shape(student->config()).num_hidden_layers)),
      relation_heads_(config.relation_heads > 0 ? config.relation_heads
                                                : tapped_shape(teacher_.config).num_attention_heads) {
  const int64_t width = tapped_shape(student->config()).hidden_size;
  const int64_t teacher_width = tapped_shape(teacher_.config).hidden_size;
  if (config_.cos_weight > 0 && width != teacher_width) {
    projection_ = torch::nn::Linear(width, teacher_width);
    projection_->to(student->parameters().front().device());
  }
}

DistilledBatch Distiller::forward(model::MaskedLm student, const model::MlmInputs& inputs, double masked,
                                  double tokens) {
  const auto device = inputs.input_ids.device();
  const auto real = inputs.has_padding && inputs.attention_mask.defined()
                        ? inputs.attention_mask.ne(0)
                        : torch::ones(inputs.input_ids.sizes(), inputs.input_ids.options().dtype(torch::kBool));
  const bool all = config_.kl_all_positions;
  const bool want_logits = config_.kl_weight > 0 || all;
  // Under kl_all_positions both models score every real token; the MLM loss then reads the
  // masked rows among them.
  auto in = inputs;
  torch::Tensor masked_rows;
  if (all) {
    const auto positions = real.flatten().nonzero().flatten();
    in.masked_positions = positions;
    in.masked_labels = inputs.input_ids.flatten().index_select(0, positions);
    in.max_selected_in_row = -1;
    masked_rows = torch::searchsorted(positions, inputs.masked_positions);
  }
  model::ForwardTaps teacher_taps, student_taps;
  teacher_taps.last_hidden = student_taps.last_hidden = config_.cos_weight > 0;
  if (config_.relation_weight > 0) {
    teacher_taps.qkv_layer = teacher_layer_;
    student_taps.qkv_layer = student_layer_;
  }
  const bool tapped = config_.cos_weight > 0 || config_.relation_weight > 0;

  const auto teacher_start = SteadyClock::now();
  torch::Tensor teacher_logits;
  {
    torch::NoGradGuard no_grad;
    AutocastScope autocast(teacher_.dtype, device);
    TapsScope scope(teacher_.model, tapped ? &teacher_taps : nullptr);
    teacher_logits = teacher_.model->forward(in, want_logits).mlm_logits;
  }
  if (device.is_cuda()) torch::cuda::synchronize();
  const double teacher_seconds = seconds_since(teacher_start);

  model::MlmOutput out;
  {
    AutocastScope autocast(student_dtype_, device);
    TapsScope scope(student, tapped ? &student_taps : nullptr);
    out = student->forward(in, want_logits);
  }
  if (all) {
    const auto rows = out.mlm_logits.index_select(0, masked_rows);
    out.mlm_loss_sum = torch::nn::functional::cross_entropy(
        rows, inputs.masked_labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    out.mlm_correct = rows.argmax(1).eq(inputs.masked_labels).sum();
  }

  const auto zero = torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  const auto kl = config_.kl_weight > 0 ? kl_loss_sum(out.mlm_logits, teacher_logits, config_.temperature) /
                                              (all ? tokens : masked)
                                        : zero;
  torch::Tensor student_hidden = student_taps.hidden;
  if (projection_) {
    AutocastScope autocast(student_dtype_, device);
    student_hidden = projection_->forward(student_hidden);
  }
  const auto cos = config_.cos_weight > 0 ? cosine_loss_sum(student_hidden, teacher_taps.hidden, real) / tokens
                                          : zero;
  const auto rel = config_.relation_weight > 0
                       ? relation_loss_sum(student_taps.qkv, teacher_taps.qkv, real, relation_heads_) /
                             (static_cast<double>(relation_heads_) * tokens)
                       : zero;
  DistilledBatch result;
  result.loss = out.mlm_loss_sum * (config_.mlm_weight / masked) + kl * config_.kl_weight + cos * config_.cos_weight +
                rel * config_.relation_weight;
  result.terms = torch::cat({kl.detach().to(torch::kFloat64).view({1}), cos.detach().to(torch::kFloat64).view({1}),
                             rel.detach().to(torch::kFloat64).view({1}),
                             torch::full({1}, teacher_seconds, torch::TensorOptions().dtype(torch::kFloat64).device(device))});
  result.out = std::move(out);
  return result;
}

std::shared_ptr<Distiller> make_distiller(const config::RunConfig& config, const text::Tokenizer& tokenizer,
                                          model::MaskedLm student, const torch::Device& device,
                                          torch::Dtype compute_dtype, torch::Dtype auto_dtype) {
  auto teacher = open_teacher(config, tokenizer, student, device, auto_dtype);
  const auto& spec = *teacher.spec;
  const auto layers = init_layer_map(config.distill, student->config().num_hidden_layers,
                                     teacher.config.num_hidden_layers);
  if (!layers.empty()) {
    const int64_t copied = init_from_teacher(student, teacher.model, spec, layers);
    log::info("distill", "student initialised from {} ({} tensors copied)", config.distill.teacher, copied);
  }
  const auto& d = config.distill;
  if (d.kl_weight == 0 && d.cos_weight == 0 && d.relation_weight == 0 && d.mlm_weight == 1) {
    // DistilBERT's init alone: no loss reads the teacher, so it is not run (nor kept).
    log::info("distill", "no loss reads the teacher (distill.kl/cos/relation_weight 0): it initialised the "
              "student and is not run; the run trains as one without a teacher");
    return nullptr;
  }
  log::info("distill", "teacher {}: {} {} layers x {}, {}", config.distill.teacher, spec.display_name(),
            teacher.config.num_hidden_layers, teacher.config.hidden_size,
            teacher.dtype == torch::kBFloat16 ? "bf16" : "fp32");
  auto distiller = std::make_shared<Distiller>(config.distill, std::move(teacher), student, compute_dtype);
  if (distiller->projection()) {
    log::info("distill", "cosine loss through a learned projection {} -> {} (trained, checkpointed, not exported)",
              tapped_shape(student->config()).hidden_size, tapped_shape(distiller->teacher().config).hidden_size);
  }
  return distiller;
}

}  // namespace mlm::train::distill

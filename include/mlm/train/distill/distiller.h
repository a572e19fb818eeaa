#pragma once
// One micro-batch of a distillation run: the teacher's forward pass (frozen, no gradient,
// autocast to its dtype) and the student's on the same inputs, and the loss
//   mlm_weight * MLM + kl_weight * KL + cos_weight * COS + relation_weight * REL
// where, with the step's global masked count M and real-token count N,
//   MLM = sum of the student's cross-entropy at the masked positions / M
//   KL  = sum over the masked positions (all real tokens: N) of T^2 KL(p_T || p_S), p = softmax(z/T)
//   COS = sum over the real tokens of 1 - cos(P h_S, h_T) (last hidden states) / N, P the
//         identity where the widths match, else a learned Linear student width -> teacher
//         width (projection(): trained with the student, saved as distill_projection.pt)
//   REL = sum over q-q, k-k, v-v, the relation heads A and the real tokens of
//         KL(R_T || R_S) / (A N), R = softmax(X X^T / sqrt(d_r)) of one layer of each model
// (distill_losses.h). Dividing by the global counts makes accumulation and data parallelism
// equal one big batch, as TrainingStep does for the MLM loss.
#include <torch/torch.h>

#include <memory>

#include "mlm/config/run_config.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/distill/teacher.h"
#include "mlm/train/loop/micro_batch_loss.h"

namespace mlm::train::distill {

/// The values a distillation step logs, in this order: distill_kl, distill_cos,
/// distill_relation (each divided as in the loss, unweighted), the teacher's seconds.
inline constexpr int64_t kDistillTerms = 4;

/// The student's output, the weighted loss above and the [kDistillTerms] terms.
using DistilledBatch = MicroBatchLossValue;

class Distiller : public MicroBatchLoss {
 public:
  /// `student_dtype`: the run's compute dtype (the student's autocast). Under the cosine loss
  /// across widths, the projection is drawn from torch's generator here, on `student`'s device.
  Distiller(const config::DistillConfig& config, Teacher teacher, const model::MaskedLm& student,
            torch::Dtype student_dtype);

  /// The loss of `student` on `inputs` (on the student's device); `masked` and `tokens`: the
  /// step's masked positions and real tokens on all ranks (at least 1).
  DistilledBatch forward(model::MaskedLm student, const model::MlmInputs& inputs, double masked,
                         double tokens) override;
  int64_t terms() const override { return kDistillTerms; }

  const Teacher& teacher() const { return teacher_; }

  /// The cosine loss's projection student width -> teacher width (a training-only part the
  /// optimizer trains and checkpoints save; never exported); empty where the widths match or
  /// distill.cos_weight is 0.
  torch::nn::Linear projection() const { return projection_; }

 private:
  config::DistillConfig config_;
  Teacher teacher_;
  torch::Dtype student_dtype_;
  int64_t teacher_layer_, student_layer_, relation_heads_;
  torch::nn::Linear projection_{nullptr};
};

/// The run's distiller: opens distill.teacher (teacher.h) and, where distill.init_every or
/// distill.init_layers asks, copies the teacher's layers into `student` (init_from_teacher.h;
/// a resume loads its checkpoint over them). `auto_dtype`: train.precision auto's dtype on
/// `device`, what distill.teacher_precision auto follows. Null where no loss reads the teacher
/// (distill.kl_weight, cos_weight and relation_weight 0, mlm_weight 1): the init alone, after
/// which the run trains as one without a teacher, at its speed.
std::shared_ptr<Distiller> make_distiller(const config::RunConfig& config, const text::Tokenizer& tokenizer,
                                          model::MaskedLm student, const torch::Device& device,
                                          torch::Dtype compute_dtype, torch::Dtype auto_dtype);

}  // namespace mlm::train::distill

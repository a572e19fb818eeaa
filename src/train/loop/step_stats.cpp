#include "mlm/train/loop/step_stats.h"

#include <atomic>

namespace mlm::train {
namespace {

std::atomic<int64_t> step_read_count{0};

}  // namespace

torch::Tensor rtd_values(const model::MlmOutput& out) {
  const torch::Tensor parts[] = {out.rtd_loss_sum, out.rtd_correct, out.rtd_true_positives,
                                 out.rtd_predicted, out.rtd_replaced, out.generator_hits};
  std::vector<torch::Tensor> values;
  for (const auto& p : parts) values.push_back(p.detach().to(torch::kFloat64).view({1}));
  return torch::cat(values);
}

std::vector<StepStats> read_steps(const std::vector<DeviceStepStats>& steps) {
  if (steps.empty()) return {};
  std::vector<torch::Tensor> outcomes;
  outcomes.reserve(steps.size());
  // Steps of one phase have one width; a distiller's steps carry kDistillTerms more.
  int64_t width = 0;
  for (const auto& s : steps) width = std::max(width, s.outcome.size(0));
  for (const auto& s : steps) {
    outcomes.push_back(s.outcome.size(0) == width ? s.outcome
                                                  : torch::cat({s.outcome, s.outcome.new_zeros({width - s.outcome.size(0)})}));
  }
  const auto values = torch::stack(outcomes).cpu();  // waits for the device, once
  ++step_read_count;
  const auto table = values.accessor<double, 2>();
  std::vector<StepStats> read;
  read.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto row = table[static_cast<int64_t>(i)];
    StepStats stats = steps[i].known;
    stats.loss_sum = row[0];
    stats.correct = row[1];
    stats.nsp_loss_sum = row[2];
    stats.nsp_correct = row[3];
    const double* sums = values.data_ptr<double>() + static_cast<int64_t>(i) * values.size(1);
    stats.rtd = RtdCounts::from(sums + kRtdSums);
    stats.grad_norm = row[kStepSums];
    stats.skipped = row[kStepSums + 1] != 0;
    stats.loss_scale = row[kStepSums + 2];
    if (steps[i].outcome.size(0) > kStepSums + 3) {
      stats.distilled = true;
      stats.distill_kl = row[kStepSums + 3];
      stats.distill_cos = row[kStepSums + 4];
      stats.distill_relation = row[kStepSums + 5];
      stats.teacher_s = row[kStepSums + 6];
    }
    stats.loss = step_loss(stats.loss_sum, stats.nsp_loss_sum, stats.rtd.loss_sum, stats);
    stats.mlm_accuracy = stats.correct / loss_divisor(stats.num_masked);
    read.push_back(stats);
  }
  return read;
}

int64_t step_reads() { return step_read_count.load(); }

}  // namespace mlm::train

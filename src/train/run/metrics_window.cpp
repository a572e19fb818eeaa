#include "mlm/train/run/metrics_window.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "mlm/train/run/progress.h"

namespace mlm::train {

MetricsWindow::MetricsWindow(const config::TrainConfig& train, const TrainerState& start,
                             const RunClock& clock)
    : train_(train), clock_(clock), start_step_(start.step), start_tokens_(start.tokens_seen) {}

void MetricsWindow::add(const StepStats& stats) {
  tokens_ += static_cast<double>(stats.tokens);
  if (stats.skipped) return;  // a skipped step's NaN must not poison the averages
  loss_sum_ += stats.loss_sum;
  correct_ += stats.correct;
  masked_ += static_cast<double>(stats.num_masked);
  nsp_loss_sum_ += stats.nsp_loss_sum;
  nsp_correct_ += stats.nsp_correct;
  nsp_pairs_ += static_cast<double>(stats.pairs);
  rtd_weight_ = stats.rtd_weight;
  scored_tokens_ += static_cast<double>(stats.tokens);
  rtd_.add(stats.rtd);
  if (stats.distilled) {  // distill.teacher: the losses' step means, averaged over the window
    distill_steps_ += 1;
    distill_kl_ += stats.distill_kl;
    distill_cos_ += stats.distill_cos;
    distill_relation_ += stats.distill_relation;
    teacher_s_ += stats.teacher_s;
  }
}

double MetricsWindow::eta_s(const TrainerState& state) const {
  const double elapsed = run_seconds();
  const auto steps_done = static_cast<double>(state.step - start_step_);
  const auto tokens_done = static_cast<double>(state.tokens_seen - start_tokens_);
  double eta = std::numeric_limits<double>::quiet_NaN();
  if (train_.max_steps > 0 && steps_done > 0) {
    eta = elapsed / steps_done * static_cast<double>(train_.max_steps - state.step);
  } else if (train_.max_tokens > 0 && tokens_done > 0) {
    eta = elapsed / tokens_done * static_cast<double>(train_.max_tokens - state.tokens_seen);
  }
  if (train_.max_time_s > 0) {
    const double left = train_.max_time_s - elapsed;
    eta = std::isnan(eta) ? left : std::min(eta, left);
  }
  return eta;
}

std::string MetricsWindow::total_steps() const {
  return train_.max_steps > 0 ? std::to_string(train_.max_steps) : "?";
}

std::string MetricsWindow::progress_text(const StepStats& last, const TrainerState& state) const {
  const std::string rtd = last.rtd_weight > 0 ? fmt::format(" rtd acc {:.4f} f1 {:.4f}",
                                                            last.rtd.accuracy(static_cast<double>(last.tokens)),
                                                            last.rtd.f1())
                                              : "";
  return fmt::format("step {}/{} loss {:.4f} acc {:.4f}{} lr {:.2e} | {} ETA {}", last.step, total_steps(),
                     last.loss, last.mlm_accuracy, rtd, last.lr, format_duration(run_seconds()),
                     format_duration(eta_s(state)));
}

MetricsWindow::Row MetricsWindow::close(const StepStats& last, const TrainerState& state) {
  const double window_s = std::max(1e-9, seconds_since(window_start_));
  // A window of skipped steps only has no loss: NaN, written as null (not a misleading 0).
  const double masked = masked_ > 0 ? masked_ : std::nan("");
  const double tokens = scored_tokens_ > 0 ? scored_tokens_ : std::nan("");
  const double mlm_loss = loss_sum_ / masked;
  const double loss = mlm_loss + (nsp_pairs_ > 0 ? nsp_loss_sum_ / nsp_pairs_ : 0.0) +
                      (rtd_weight_ > 0 ? rtd_weight_ * rtd_.loss_sum / tokens : 0.0);
  const double accuracy = correct_ / masked;
  const double tokens_per_s = tokens_ / window_s;
  Row row;
  row.json = {{"step", last.step},
              {"tokens", state.tokens_seen},
              {"loss", loss},
              {"mlm_accuracy", accuracy},
              {"lr", last.lr},
              {"grad_norm", last.grad_norm},
              {"tokens_per_s", tokens_per_s},
              {"elapsed_s", state.train_time_s}};
  if (nsp_pairs_ > 0) row.json["nsp_accuracy"] = nsp_correct_ / nsp_pairs_;
  std::string rtd_line;
  if (rtd_weight_ > 0) {  // the generator's MLM loss apart from the joint loss
    row.json["mlm_loss"] = mlm_loss;
    row.json.update(rtd_.to_json(tokens, masked));
    row.rtd = rtd_;
    row.rtd_tokens = tokens;
    rtd_line = fmt::format(" | gen loss {:.4f} | rtd loss {:.4f} acc {:.4f} f1 {:.4f}", mlm_loss, rtd_.loss(tokens),
                           rtd_.accuracy(tokens), rtd_.f1());
  }
  if (distill_steps_ > 0) {  // the student's MLM loss is `loss`; the distillation losses apart
    row.json["distill_kl"] = distill_kl_ / distill_steps_;
    row.json["distill_cos"] = distill_cos_ / distill_steps_;
    row.json["distill_relation"] = distill_relation_ / distill_steps_;
    row.json["teacher_share"] = teacher_s_ / window_s;  // of the window's wall-clock, one rank's view x ranks
  }
  if (state.skipped_steps > 0) row.json["skipped_steps"] = state.skipped_steps;
  if (last.loss_scale > 0) row.json["loss_scale"] = last.loss_scale;  // fp16: the scale it ran at
  row.line = fmt::format(
      "step {}/{} | loss {:.4f} | acc {:.4f}{} | lr {:.3e} | grad {:.3f} | {} tok/s | {} elapsed "
      "| ETA {}{}",
      last.step, total_steps(), loss, accuracy, rtd_line, last.lr, last.grad_norm,
      format_count(tokens_per_s), format_duration(run_seconds()), format_duration(eta_s(state)),
      state.skipped_steps > 0 ? fmt::format(" | {} skipped", state.skipped_steps) : "");

  loss_sum_ = correct_ = masked_ = tokens_ = nsp_loss_sum_ = nsp_correct_ = nsp_pairs_ = scored_tokens_ = 0;
  rtd_ = RtdCounts();
  distill_steps_ = distill_kl_ = distill_cos_ = distill_relation_ = teacher_s_ = 0;
  window_start_ = SteadyClock::now();
  return row;
}

}  // namespace mlm::train

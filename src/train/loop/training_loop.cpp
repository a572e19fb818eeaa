#include "mlm/train/loop/training_loop.h"

#include <cmath>

#include "mlm/train/optim/ema_weights.h"
#include "mlm/train/loop/evaluator.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {

TrainingLoop::TrainingLoop(LoopParts parts)
    : parts_(std::move(parts)), state_(parts_.contents.state) {
  if (parts_.comm.is_main())
    pll_ = likelihood::RunPll::open(parts_.config.eval, parts_.contents.model, parts_.contents.tokenizer);
}

int TrainingLoop::run() {
  const RunClock clock(state_.train_time_s);
  parts_.reporter.started(state_, clock);
  trained_step_ = state_.step;
  trained_tokens_ = state_.tokens_seen;
  // Every rank reads at the same steps, so all of them notice a divergence at the same one.
  const bool read_every_step = parts_.comm.sum_across_ranks(
      {on_step_ || parts_.reporter.wants_every_step() ? 1.0 : 0.0})[0] > 0;
  // The initial weights' scores: the baseline of the curves (a resumed run has them already).
  if (parts_.config.eval.on_start && state_.step == 0) pause_for([&] { evaluate_and_report(/*at_end=*/false); });
  StopReason stop = StopReason::none;
  while (stop == StopReason::none && !parts_.schedule.finished(trained_step_, trained_tokens_)) {
    train_step();
    state_.train_time_s = clock.train_time_s();
    const int64_t step = trained_step_;
    const bool evaluate = parts_.schedule.evaluate_at(step);
    const bool checkpoint = parts_.schedule.checkpoint_at(step);
    if (read_every_step || parts_.schedule.log_at(step) || evaluate || checkpoint) catch_up();
    if (evaluate) pause_for([&] { evaluate_and_report(parts_.schedule.finished(trained_step_, trained_tokens_)); });
    if (checkpoint) pause_for([&] { save_checkpoint(); });
    stop = parts_.schedule.agree_to_stop(parts_.comm, clock.run_seconds(),
                                         parts_.reporter.pending_signal());
  }
  return finish(stop, clock);
}

template <typename F>
void TrainingLoop::pause_for(F&& work) {
  const auto start = SteadyClock::now();
  work();
  parts_.reporter.paused(seconds_since(start));
}

void TrainingLoop::train_step() {
  const int64_t step = trained_step_ + 1;
  if (const auto rate = parts_.masking_rate.at(step)) parts_.batches.set_masking_rate(*rate);
  const auto batches = collect_step(parts_.batches, parts_.batch_ramp.micro_batches(trained_tokens_));
  unread_.push_back(parts_.step.run(step, parts_.lr.at(step), batches));
  if (parts_.contents.ema) parts_.contents.ema->update(step);
  trained_step_ = step;
  trained_tokens_ += unread_.back().known.tokens;
}

void TrainingLoop::catch_up() {
  const auto steps = read_steps(unread_);
  unread_.clear();
  for (const auto& stats : steps) {
    count_step(stats);
    if (on_step_) on_step_(stats);
    parts_.reporter.stepped(stats, state_, parts_.schedule.log_at(stats.step));
  }
}

void TrainingLoop::count_step(const StepStats& stats) {
  state_.step = stats.step;
  state_.tokens_seen += stats.tokens;
  if (!stats.skipped) {
    state_.consecutive_skipped = 0;
    return;
  }
  ++state_.skipped_steps;
  // fp16 gradients overflowing at a scale above 1 are the loss scaler's to handle (it has
  // halved the scale already), not a sign of divergence: only a finite loss qualifies.
  if (stats.loss_scale > 1 && std::isfinite(stats.loss)) {
    log::info("train", "step {}: fp16 gradients overflowed at loss scale {}; step skipped, scale halved",
              stats.step, stats.loss_scale);
    return;
  }
  ++state_.consecutive_skipped;
  log::warn("train", "step {}: non-finite {} (loss {}, grad norm {}); step skipped ({} in a row, "
            "{} in total)", stats.step, std::isfinite(stats.loss) ? "gradient" : "loss",
            stats.loss, stats.grad_norm, state_.consecutive_skipped, state_.skipped_steps);
  if (state_.consecutive_skipped >= parts_.config.train.max_skipped_steps) {
    throw std::runtime_error(
        "training diverged: " + std::to_string(state_.consecutive_skipped) +
        " non-finite steps in a row (train.max_skipped_steps) at step " +
        std::to_string(stats.step) + "; the last good checkpoint is in " +
        (std::filesystem::path(parts_.config.train.output_dir) / "checkpoints").string() +
        " (try a lower optim.learning_rate or longer warmup)");
  }
}

int TrainingLoop::finish(StopReason stop, const RunClock& clock) {
  catch_up();
  parts_.reporter.stopping(stop, state_);
  state_.train_time_s = clock.train_time_s();
  // A run that ended as configured is scored at its last step; a signalled one hurries.
  if (exit_code_for(stop) == kExitOk && last_eval_step_ != state_.step) evaluate_and_report(/*at_end=*/true);
  if (parts_.checkpoints.last_step() != state_.step) save_checkpoint();
  parts_.reporter.finished(state_);
  return exit_code_for(stop);
}

void TrainingLoop::save_checkpoint() {
  const auto start = SteadyClock::now();
  const auto dir = parts_.checkpoints.save(parts_.contents);
  parts_.reporter.checkpointed(dir, seconds_since(start));
}

EvalResult TrainingLoop::evaluate_and_report(bool at_end) {
  if (!valid_batches_) {  // read and tokenized once per run, masked anew at each evaluation
    valid_batches_ =
        std::make_unique<masking::ValidationBatches>(parts_.plan, parts_.contents.tokenizer);
  }
  const auto score = [&] {
    return evaluate(parts_.contents.model, *valid_batches_, parts_.comm, parts_.device, parts_.compute_dtype);
  };
  auto result = score();
  if (!source_evaluation_) {
    source_evaluation_ = std::make_unique<SourceEvaluation>(parts_.plan, parts_.contents.tokenizer);
  }
  result.source_accuracy =
      source_evaluation_->accuracies(parts_.contents.model, parts_.comm, parts_.device, parts_.compute_dtype);
  if (pll_) {  // rank 0 alone, as the probes: the others wait at the next collective
    const auto scores = pll_->score();
    result.pseudo_perplexity = scores.pseudo_perplexity;
    result.minimal_pair_accuracy = scores.minimal_pair_accuracy;
    result.pll_seconds = scores.seconds;
  }
  last_eval_ = result;
  last_eval_step_ = state_.step;
  if (parts_.contents.ema) {
    // The same batches and masks, with the shadow in the model's parameters.
    last_eval_ema_ = parts_.contents.ema->with_shadow(score);
  }
  parts_.reporter.evaluated(result, state_, last_eval_ema_ ? &*last_eval_ema_ : nullptr);
  const int64_t every = parts_.config.eval.probe_every_steps;
  if (parts_.run_probes && parts_.comm.is_main() && (at_end || every == 0 || state_.step % every == 0)) {
    // Rank 0 alone: the others wait at the next collective.
    parts_.reporter.probed(parts_.run_probes(), state_);
  }
  return result;
}

}  // namespace mlm::train

#include "mlm/train/run/run_log.h"

#include <fmt/format.h>

#include "mlm/train/run/stop_signals.h"
#include "mlm/util/logging.h"

namespace mlm::train {

RunLog::RunLog(const config::RunConfig& config, bool is_main, std::optional<int64_t> resumed_step)
    : config_(config),
      is_main_(is_main),
      progress_(is_main && progress_bar_wanted(config.logging.progress_bar)),
      collapse_(config.schedule.warmup_steps_for(config.train.max_steps)) {
  if (is_main_) {
    metrics_ = std::make_unique<MetricsLog>(
        std::filesystem::path(config.train.output_dir) / "metrics.jsonl", resumed_step);
    if (config.logging.tensorboard) {
      tensorboard_ = std::make_unique<TensorBoardLog>(config.train.output_dir, resumed_step);
    }
  }
}

void RunLog::started(const TrainerState& state, const RunClock& clock) {
  window_.emplace(config_.train, state, clock);
}

void RunLog::stepped(const StepStats& stats, const TrainerState& state, bool closes_window) {
  window_->add(stats);
  if (!is_main_) return;
  if (!closes_window) {
    progress_.update(window_->progress_text(stats, state));
    return;
  }
  const auto row = window_->close(stats, state);
  write_row(row.json);
  progress_.clear();
  log::info("train", "{}", row.line);
  if (row.rtd) {
    if (const auto warning = collapse_.window(*row.rtd, row.rtd_tokens, state.step)) log::warn("train", "{}", *warning);
  }
}

void RunLog::paused(double seconds) {
  if (window_) window_->pause(seconds);
}

void RunLog::probed(const std::vector<ProbeScore>& scores, const TrainerState& state) {
  if (!is_main_) return;
  for (const auto& s : scores) {
    nlohmann::json row = {{"step", state.step},
                          {"tokens", state.tokens_seen},
                          {"probe", s.task},
                          {"probe_metric", s.metric},
                          {"probe_validation", s.validation}};
    if (s.tasks > 0) {
      row["probe_tasks"] = s.tasks;  // a suite's average, after its tasks' rows
    } else {
      row["probe_best_epoch"] = s.best_epoch;
      row["probe_steps"] = s.steps;
      row["probe_time_s"] = s.seconds;
      row["probe_eval_time_s"] = s.eval_seconds;
    }
    if (s.test) row["probe_test"] = *s.test;
    if (!s.suite.empty()) {  // the scores above are means over the suite's seeds
      row["probe_suite"] = s.suite;
      row["probe_seeds"] = s.validation_per_seed.size();
      row["probe_validation_std"] = s.validation_std;
      row["probe_validation_per_seed"] = s.validation_per_seed;
      if (s.test_std) {
        row["probe_test_std"] = *s.test_std;
        row["probe_test_per_seed"] = s.test_per_seed;
      }
    }
    write_row(row);
    progress_.clear();
    const auto seeds = s.validation_per_seed.size();
    const auto pm = [&](double mean, double std) {
      return s.suite.empty() ? fmt::format("{:.4f}", mean) : fmt::format("{:.4f} ± {:.4f}", mean, std);
    };
    const auto scores_text = pm(s.validation, s.validation_std) +
                             (s.test ? ", test " + pm(*s.test, s.test_std.value_or(0)) : "");
    if (s.tasks > 0)
      log::info("probe", "step {} | {}: average of {} tasks: validation {} (std over {} seeds)", state.step, s.task,
                s.tasks, scores_text, seeds);
    else
      log::info("probe", "step {} | {}: validation {} {} | {} steps{} in {}", state.step, s.task, s.metric,
                scores_text, s.steps, s.suite.empty() ? "" : fmt::format(" x {} seeds", seeds),
                format_duration(s.seconds));
  }
}

namespace {

// An evaluation's eval_* fields.
nlohmann::json eval_fields(const EvalResult& result) {
  nlohmann::json fields = {{"eval_loss", result.mlm_loss()},
                           {"eval_mlm_accuracy", result.masked_accuracy()},
                           {"eval_perplexity", result.perplexity()},
                           {"eval_unigram_accuracy", result.unigram_accuracy()},
                           {"eval_num_masked", result.num_masked},
                           {"eval_time_s", result.seconds}};
  if (result.num_sentence_pairs > 0) fields["eval_nsp_accuracy"] = result.nsp_accuracy();
  const auto tokens = static_cast<double>(result.tokens), masked = static_cast<double>(result.num_masked);
  if (result.rtd) fields.update(result.rtd_counts.to_json(tokens, masked, "eval_"));
  return fields;
}

}  // namespace

void RunLog::evaluated(const EvalResult& result, const TrainerState& state, const EvalResult* ema) {
  if (!is_main_) return;
  nlohmann::json row = {{"step", state.step}, {"tokens", state.tokens_seen}};
  row.update(eval_fields(result));
  if (ema) {
    // The same batches and masks: the unigram baseline and the masked count are the weights'.
    auto fields = eval_fields(*ema);
    fields.erase("eval_unigram_accuracy");
    fields.erase("eval_num_masked");
    for (const auto& [key, value] : fields.items()) row[key + "_ema"] = value;
  }
  const auto tokens = static_cast<double>(result.tokens), masked = static_cast<double>(result.num_masked);
  for (const auto& [source, accuracy] : result.source_accuracy) row["eval_mlm_accuracy/" + source] = accuracy;
  if (result.pseudo_perplexity) row["eval_pseudo_perplexity"] = *result.pseudo_perplexity;
  if (result.minimal_pair_accuracy) row["eval_minimal_pair_accuracy"] = *result.minimal_pair_accuracy;
  if (result.pseudo_perplexity || result.minimal_pair_accuracy) row["eval_pll_time_s"] = result.pll_seconds;
  write_row(row);
  progress_.clear();
  log::info("eval", "step {} | loss {:.4f} | perplexity {:.2f} | masked accuracy {:.4f} "
            "({} tokens; unigram baseline {:.4f}){} | {}",
            state.step, result.mlm_loss(), result.perplexity(), result.masked_accuracy(),
            result.num_masked, result.unigram_accuracy(),
            result.num_sentence_pairs > 0
                ? fmt::format(" | sentence-pair accuracy {:.4f}", result.nsp_accuracy())
                : "",
            format_duration(result.seconds));
  if (result.rtd) {
    const auto& r = result.rtd_counts;
    log::info("eval", "step {} | replaced-token detection: loss {:.4f} | accuracy {:.4f} | precision {:.4f} "
              "| recall {:.4f} | F1 {:.4f} | generator sampled the original at {:.4f} of masked positions",
              state.step, r.loss(tokens), r.accuracy(tokens), r.precision(), r.recall(), r.f1(),
              r.generator_accuracy(masked));
  }
  if (result.pseudo_perplexity || result.minimal_pair_accuracy) {
    log::info("eval", "step {} | pseudo-perplexity {} | minimal-pair accuracy {} | {}", state.step,
              result.pseudo_perplexity ? fmt::format("{:.3f}", *result.pseudo_perplexity) : "-",
              result.minimal_pair_accuracy ? fmt::format("{:.4f}", *result.minimal_pair_accuracy) : "-",
              format_duration(result.pll_seconds));
  }
  if (ema) {
    log::info("eval", "step {} | EMA of the weights: loss {:.4f} | perplexity {:.2f} | masked accuracy {:.4f} "
              "({:+.4f} against the weights) | {}",
              state.step, ema->mlm_loss(), ema->perplexity(), ema->masked_accuracy(),
              ema->masked_accuracy() - result.masked_accuracy(), format_duration(ema->seconds));
  }
  if (const auto warning = collapse_.evaluated(result, state.step)) log::warn("eval", "{}", *warning);
}

void RunLog::checkpointed(const std::filesystem::path& dir, double seconds) {
  if (!is_main_) return;
  progress_.clear();
  log::info("ckpt", "wrote {} ({:.1f}s)", dir.string(), seconds);
}

void RunLog::stopping(StopReason reason, const TrainerState& state) {
  progress_.clear();
  if (reason == StopReason::sigint || reason == StopReason::sigterm) {
    log::warn("train", "{} received: writing a checkpoint at step {} and stopping",
              reason == StopReason::sigterm ? "SIGTERM" : "SIGINT", state.step);
  } else if (reason == StopReason::out_of_time) {
    log::info("train", "train.max_time_s ({}s) reached at step {}", config_.train.max_time_s,
              state.step);
  }
}

void RunLog::finished(const TrainerState& state) {
  log::info("train", "stopped at step {} after {} tokens; {} skipped step(s); {} this run",
            state.step, state.tokens_seen, state.skipped_steps,
            format_duration(window_ ? window_->run_seconds() : 0.0));
}

int RunLog::pending_signal() const { return StopSignals::pending(); }

void RunLog::begin_phase(const RunPhase& phase, int64_t phase_count) {
  phase_name_ = phase.name;
  if (!is_main_ || phase.name.empty()) return;
  const auto& data = phase.config.data;
  const auto& train = phase.config.train;
  log::info("train", "phase {}/{} '{}' from step {}: {} {}; {} tokens per sequence, micro-batch {} x {}; "
            "learning rate {}; optimizer moments {}",
            phase.index + 1, phase_count, phase.name, phase.start_step,
            phase.steps > 0 ? phase.steps : phase.tokens, phase.steps > 0 ? "steps" : "tokens",
            data.seq_len, train.micro_batch_size, train.grad_accum_steps,
            phase.restarts_schedule ? "restarted" : "continued",
            phase.index == 0 ? "fresh" : phase.resets_optimizer ? "reset" : "carried over");
}

void RunLog::write_row(nlohmann::json row) {
  if (!phase_name_.empty()) row["phase"] = phase_name_;
  metrics_->write(row);
  if (tensorboard_) tensorboard_->write(row);
}

}  // namespace mlm::train

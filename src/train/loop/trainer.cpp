#include "mlm/train/loop/trainer.h"

#include <cmath>

#include "mlm/config/config_loader.h"
#include "mlm/train/app/bootstrap.h"
#include "mlm/train/app/stop_signals.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/loop/evaluator.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {

const std::vector<std::string>& checkpoint_required_files() {
  static const std::vector<std::string> files = {"model.pt", "optimizer.pt", "trainer_state.json",
                                                 "config.yaml", "tokenizer.model"};
  return files;
}

Trainer::Trainer(config::RunConfig config, TrainerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
  auto process = options_.comm ? bootstrap(config_, options_.comm) : bootstrap(config_);
  comm_ = process.comm;
  device_ = process.device;
  bf16_ = process.bf16;
  output_dir_ = config_.train.output_dir;
  lock_output_dir();
  resume_ = resume_mode(process.restart_count);
  tokenizer_.emplace(open_tokenizer(config_, *comm_));

  // Every rank starts from the same weights; dropout then draws from a per-rank stream
  // (rank 0 keeps train.seed, so one process is unchanged).
  model_ = build_model(config_, tokenizer_->vocab(), device_);
  if (comm_->rank() > 0) {
    torch::manual_seed(static_cast<uint64_t>(config_.train.seed) + static_cast<uint64_t>(comm_->rank()));
  }
  step_ = std::make_unique<TrainingStep>(model_, config_, comm_, bf16_);
  step_->set_gradient_hook(options_.gradient_hook);
  schedule_ = std::make_unique<RunSchedule>(config_, comm_->world_size());
  lr_ = std::make_unique<LrSchedule>(config_.schedule, config_.optim.learning_rate,
                                     schedule_->horizon());

  std::optional<nlohmann::json> position;
  if (const auto dir = resolve_resume()) {
    position = resume_from(*dir);
  } else if (resume_.empty()) {
    refuse_existing_checkpoints();
  }
  batches_ = std::make_unique<masking::BatchStream>(
      config::resolve_data_plan(config_, comm_->rank(), comm_->world_size()), *tokenizer_,
      data::Split::train, position ? &*position : nullptr);

  if (comm_->is_main()) {  // the run lock made output_dir_
    write_file_durably(output_dir_ / "config.yaml", config::dump_config(config_));
    metrics_ = std::make_unique<MetricsLog>(output_dir_ / "metrics.jsonl", resumed_step_);
  }
  progress_ = std::make_unique<ProgressLine>(comm_->is_main() &&
                                             progress_bar_wanted(config_.logging.progress_bar));
}

Trainer::~Trainer() = default;

int Trainer::run() {
  StopSignals signals;
  MetricsWindow window(config_.train, state_);
  log_start();
  StopReason stop = StopReason::none;
  while (stop == StopReason::none && !schedule_->finished(state_.step, state_.tokens_seen)) {
    const StepStats stats = train_step();
    state_.train_time_s = window.train_time_s();
    if (on_step_) on_step_(stats);
    report(window, stats);
    if (schedule_->evaluate_at(state_.step)) window.exclude([&] { evaluate_and_log(); });
    if (schedule_->checkpoint_at(state_.step)) window.exclude([&] { save_checkpoint(); });
    stop = schedule_->agree_to_stop(*comm_, window.run_seconds());
  }
  return finish(stop, window);
}

void Trainer::log_start() {
  log::info("train", "{} parameters on {} ({}), {} rank(s); global batch {} sequences x {} "
            "tokens; {} threads; from step {}",
            model::count_parameters(*model_), device_.str(), bf16_ ? "bf16" : "fp32",
            comm_->world_size(), batches_->batch_size() * config_.train.grad_accum_steps *
            comm_->world_size(), config_.data.seq_len, torch::get_num_threads(), state_.step);
}

StepStats Trainer::train_step() {
  const int64_t step = state_.step + 1;
  const auto batches = collect_step(*batches_, config_.train.grad_accum_steps);
  const StepStats stats = step_->run(step, lr_->at(step), batches);
  count_step(stats);
  return stats;
}

void Trainer::count_step(const StepStats& stats) {
  state_.step = stats.step;
  state_.tokens_seen += stats.tokens;
  if (!stats.skipped) {
    state_.consecutive_skipped = 0;
    return;
  }
  ++state_.skipped_steps;
  ++state_.consecutive_skipped;
  log::warn("train", "step {}: non-finite {} (loss {}, grad norm {}); step skipped ({} in a row, "
            "{} in total)", stats.step, std::isfinite(stats.loss) ? "gradient" : "loss",
            stats.loss, stats.grad_norm, state_.consecutive_skipped, state_.skipped_steps);
  if (state_.consecutive_skipped >= config_.train.max_skipped_steps) {
    throw std::runtime_error(
        "training diverged: " + std::to_string(state_.consecutive_skipped) +
        " non-finite steps in a row (train.max_skipped_steps) at step " +
        std::to_string(stats.step) + "; the last good checkpoint is in " +
        (output_dir_ / "checkpoints").string() + " (try a lower optim.learning_rate or longer warmup)");
  }
}

void Trainer::report(MetricsWindow& window, const StepStats& stats) {
  window.add(stats);
  if (!comm_->is_main()) return;
  if (!schedule_->log_at(stats.step)) {
    progress_->update(window.progress_text(stats, state_));
    return;
  }
  const auto row = window.close(stats, state_);
  metrics_->write(row.json);
  progress_->clear();
  log::info("train", "{}", row.line);
}

int Trainer::finish(StopReason stop, const MetricsWindow& window) {
  progress_->clear();
  if (stop == StopReason::sigint || stop == StopReason::sigterm) {
    log::warn("train", "{} received: writing a checkpoint at step {} and stopping",
              stop == StopReason::sigterm ? "SIGTERM" : "SIGINT", state_.step);
  } else if (stop == StopReason::out_of_time) {
    log::info("train", "train.max_time_s ({}s) reached at step {}", config_.train.max_time_s,
              state_.step);
  }
  state_.train_time_s = window.train_time_s();
  // A run that ended as configured is scored at its last step; a signalled one hurries.
  if (exit_code_for(stop) == kExitOk && last_eval_step_ != state_.step) evaluate_and_log();
  if (last_checkpoint_step_ != state_.step) save_checkpoint();
  log::info("train", "stopped at step {} after {} tokens; {} skipped step(s); {} this run",
            state_.step, state_.tokens_seen, state_.skipped_steps,
            format_duration(window.run_seconds()));
  return exit_code_for(stop);
}

EvalResult Trainer::evaluate_and_log() {
  if (!valid_batches_) {  // read and tokenized once per run, masked anew at each evaluation
    valid_batches_ = std::make_unique<masking::ValidationBatches>(
        config::resolve_data_plan(config_, comm_->rank(), comm_->world_size()), *tokenizer_);
  }
  const auto result = evaluate(model_, config_, *valid_batches_, *comm_, device_);
  last_eval_ = result;
  last_eval_step_ = state_.step;
  if (comm_->is_main()) {
    nlohmann::json row = {{"step", state_.step},
                          {"tokens", state_.tokens_seen},
                          {"eval_loss", result.mlm_loss()},
                          {"eval_mlm_accuracy", result.masked_accuracy()},
                          {"eval_perplexity", result.perplexity()},
                          {"eval_unigram_accuracy", result.unigram_accuracy()},
                          {"eval_num_masked", result.num_masked},
                          {"eval_time_s", result.seconds}};
    if (result.num_sentence_pairs > 0) row["eval_nsp_accuracy"] = result.nsp_accuracy();
    metrics_->write(row);
    progress_->clear();
    log::info("eval", "step {} | loss {:.4f} | perplexity {:.2f} | masked accuracy {:.4f} "
              "({} tokens; unigram baseline {:.4f}){} | {}",
              state_.step, result.mlm_loss(), result.perplexity(), result.masked_accuracy(),
              result.num_masked, result.unigram_accuracy(),
              result.num_sentence_pairs > 0
                  ? fmt::format(" | sentence-pair accuracy {:.4f}", result.nsp_accuracy())
                  : "",
              format_duration(result.seconds));
  }
  return result;
}

}  // namespace mlm::train

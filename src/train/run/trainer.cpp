#include "mlm/train/run/trainer.h"

#include "mlm/config/config_loader.h"
#include "mlm/config/phases.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/finetune/probes.h"
#include "mlm/train/optim/ema_weights.h"
#include "mlm/train/run/bootstrap.h"
#include "mlm/train/run/device.h"
#include "mlm/train/run/stop_signals.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {

Trainer::Trainer(config::RunConfig config, TrainerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
  auto process = options_.comm ? bootstrap(config_, options_.comm) : bootstrap(config_);
  comm_ = process.comm;
  device_ = process.device;
  compute_dtype_ = process.compute_dtype;
  output_dir_ = config_.train.output_dir;
  // Locked before anything is written or trained: one writer per run directory.
  checkpoints_ = std::make_unique<RunCheckpoints>(config_, comm_, options_.resume,
                                                  process.restart_count);
  tokenizer_.emplace(open_tokenizer(config_, *comm_));

  // Every rank starts from the same weights; dropout then draws from a per-rank stream
  // (rank 0 keeps train.seed, so one process is unchanged).
  model_ = build_model(config_, tokenizer_->vocab(), device_);
  if (config_.distill.enabled()) {
    distiller_ = distill::make_distiller(config_, *tokenizer_, model_, device_, compute_dtype_,
                                         train::compute_dtype(config::Precision::auto_detect, device_));
  }
  if (config_.train.ema_decay > 0) ema_ = std::make_unique<EmaWeights>(model_, config_.train);
  if (comm_->rank() > 0) {
    torch::manual_seed(static_cast<uint64_t>(config_.train.seed) + static_cast<uint64_t>(comm_->rank()));
  }

  // A resumed run continues in the phase its checkpoint was written in, whose optimizer the
  // checkpoint restores; one written at a phase's end continues with the next phase.
  std::optional<nlohmann::json> position;
  const auto resume_dir = checkpoints_->find_resume();
  RunPhase phase = run_phase(config_, 0, 0, 0);
  std::optional<TrainerState> saved;
  if (resume_dir) {
    const auto path = *resume_dir / "trainer_state.json";
    saved = TrainerState::load(path);
    if (saved->phase >= config::phase_count(config_)) {
      throw CheckpointError(path.string() + ": phase " + std::to_string(saved->phase) +
                            " does not exist in this run's config (" +
                            std::to_string(config::phase_count(config_)) + " phase(s))");
    }
    phase = run_phase(config_, saved->phase, saved->phase_start_step, saved->phase_start_tokens);
  }
  enter_phase(phase);
  if (resume_dir) {
    position = checkpoints_->resume_from(*resume_dir, contents(), std::move(*saved));
    // fp16 continues at the saved scale; a checkpoint of a bf16/fp32 run starts the scaler anew.
    if (auto* scaler = step_->loss_scaler(); scaler && state_.loss_scale) scaler->restore(*state_.loss_scale);
  }
  if (position && !phase_.last && phase_.over(state_.step, state_.tokens_seen)) {
    enter_phase(run_phase(config_, phase_.index + 1, state_.step, state_.tokens_seen));
    position.reset();
  }

  open_batches(position ? &*position : nullptr);
  if (comm_->is_main()) {  // the run lock made output_dir_
    write_file_durably(output_dir_ / "config.yaml", config::dump_config(config_));
  }
  log_ = std::make_unique<RunLog>(config_, comm_->is_main(), checkpoints_->resumed_step());
  start_loop();
}

Trainer::~Trainer() = default;

void Trainer::enter_phase(RunPhase phase) {
  phase_ = std::move(phase);
  const auto& config = phase_.config;
  plan_ = config::resolve_data_plan(config, comm_->rank(), comm_->world_size());
  const torch::nn::Module* projection = distiller_ && distiller_->projection() ? distiller_->projection().get() : nullptr;
  auto step = std::make_unique<TrainingStep>(model_, config, comm_, compute_dtype_, projection);
  if (step_ && !phase_.resets_optimizer) step->take_optimizer_state(*step_);
  step_ = std::move(step);
  step_->set_gradient_hook(options_.gradient_hook);
  step_->set_distiller(distiller_);
  schedule_ = std::make_unique<RunSchedule>(config_, phase_);
  lr_ = std::make_unique<LrSchedule>(phase_learning_rate(config_, phase_, comm_->world_size()));
  masking_rate_ = std::make_unique<MaskingRate>(config.masking, phase_.start_step,
                                                phase_length(config_, phase_, comm_->world_size()));
  batch_ramp_ = std::make_unique<BatchRamp>(config.train, comm_->world_size());
  model_->apply_phase_settings(config.model);
  if (ema_) ema_->configure(config.train);  // a phase may change the decay; the shadow stays
  state_.phase = phase_.index;
  state_.phase_name = phase_.name;
  state_.phase_start_step = phase_.start_step;
  state_.phase_start_tokens = phase_.start_tokens;
}

void Trainer::open_batches(const nlohmann::json* position) {
  batches_ = std::make_unique<masking::BatchStream>(plan_, *tokenizer_, data::Split::train, position);
}

void Trainer::start_loop() {
  log_->begin_phase(phase_, config::phase_count(config_));
  // The loop says when the probes are due; finetune/ says what they do.
  probes_ = std::make_unique<finetune::Probes>(phase_.config.eval.probes, model_->max_sequence_length());
  RunProbes run_probes;
  if (!probes_->empty()) run_probes = [this] { return probes_->run(model_, *tokenizer_, device_, compute_dtype_); };
  loop_ = std::make_unique<TrainingLoop>(LoopParts{phase_.config, plan_, *comm_, device_, compute_dtype_,
                                                   *step_, *lr_, *masking_rate_, *batch_ramp_,
                                                   *schedule_, *batches_, *checkpoints_,
                                                   contents(), *log_, std::move(run_probes)});
  if (on_step_) loop_->on_step(on_step_);
}

CheckpointContents Trainer::contents() {
  return CheckpointContents{model_, step_->optimizer(), state_, *tokenizer_,
                            [this] { return batches_->source().resume_state(); },
                            [this]() -> std::optional<LossScaleState> {
                              if (auto* scaler = step_->loss_scaler()) return scaler->state();
                              return std::nullopt;
                            },
                            ema_.get(),
                            distiller_ && distiller_->projection() ? distiller_->projection().ptr() : nullptr};
}

void Trainer::on_step(std::function<void(const StepStats&)> callback) {
  on_step_ = std::move(callback);
  loop_->on_step(on_step_);
}

int Trainer::run() {
  const StopSignals signals;
  log_start();
  for (;;) {
    const int code = loop_->run();
    // Stopped by a signal or the clock, or the run's own caps: no phase follows.
    if (code != kExitOk || phase_.last || !phase_.over(state_.step, state_.tokens_seen) ||
        schedule_->run_finished(state_.step, state_.tokens_seen)) {
      return code;
    }
    enter_phase(run_phase(config_, phase_.index + 1, state_.step, state_.tokens_seen));
    open_batches(nullptr);
    start_loop();
  }
}

void Trainer::log_start() {
  log::info("train", "{} parameters on {} ({}), {} rank(s); global batch {} sequences x {} "
            "tokens; {} threads; from step {}",
            model::count_parameters(*model_), device_.str(), precision_name(compute_dtype_),
            comm_->world_size(), batches_->batch_size() * phase_.config.train.grad_accum_steps *
            comm_->world_size(), phase_.config.data.seq_len, torch::get_num_threads(), state_.step);
}

}  // namespace mlm::train

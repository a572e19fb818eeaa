#include "mlm/train/app/trainer.h"

#include "mlm/config/config_loader.h"
#include "mlm/train/app/bootstrap.h"
#include "mlm/train/app/stop_signals.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/util/logging.h"

namespace mlm::train {

Trainer::Trainer(config::RunConfig config, TrainerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
  auto process = options_.comm ? bootstrap(config_, options_.comm) : bootstrap(config_);
  comm_ = process.comm;
  device_ = process.device;
  bf16_ = process.bf16;
  output_dir_ = config_.train.output_dir;
  plan_ = config::resolve_data_plan(config_, comm_->rank(), comm_->world_size());
  // Locked before anything is written or trained: one writer per run directory.
  checkpoints_ = std::make_unique<RunCheckpoints>(config_, comm_, options_.resume,
                                                  process.restart_count);
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

  const CheckpointContents contents{model_, step_->optimizer(), state_, *tokenizer_,
                                    [this] { return batches_->source().resume_state(); }};
  const auto position = checkpoints_->resume_or_refuse(contents);
  batches_ = std::make_unique<masking::BatchStream>(plan_, *tokenizer_, data::Split::train,
                                                    position ? &*position : nullptr);

  if (comm_->is_main()) {  // the run lock made output_dir_
    write_file_durably(output_dir_ / "config.yaml", config::dump_config(config_));
  }
  log_ = std::make_unique<RunLog>(config_, comm_->is_main(), checkpoints_->resumed_step());
  loop_ = std::make_unique<TrainingLoop>(LoopParts{config_, plan_, *comm_, device_, bf16_,
                                                   *step_, *lr_, *schedule_, *batches_,
                                                   *checkpoints_, contents, *log_});
}

Trainer::~Trainer() = default;

int Trainer::run() {
  const StopSignals signals;
  log_start();
  return loop_->run();
}

void Trainer::log_start() {
  log::info("train", "{} parameters on {} ({}), {} rank(s); global batch {} sequences x {} "
            "tokens; {} threads; from step {}",
            model::count_parameters(*model_), device_.str(), bf16_ ? "bf16" : "fp32",
            comm_->world_size(), batches_->batch_size() * config_.train.grad_accum_steps *
            comm_->world_size(), config_.data.seq_len, torch::get_num_threads(), state_.step);
}

}  // namespace mlm::train

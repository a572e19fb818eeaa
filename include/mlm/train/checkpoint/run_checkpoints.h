#pragma once
// A run's checkpoints: the one component that writes them and continues from them. It holds
// the run directory's lock (one writer per run), decides whether this start resumes (--resume,
// train.resume, or auto in a restarted worker group), refuses to start a new run over an old
// one, saves what it is handed and restores it. The training loop only says when to save.
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/checkpoint/run_lock.h"
#include "mlm/train/checkpoint/trainer_state.h"

namespace mlm::train {

class EmaWeights;

/// The files a checkpoint written by a run must contain (besides DONE).
const std::vector<std::string>& checkpoint_required_files();

/// What a checkpoint holds, by reference: saving reads it, resuming writes it.
struct CheckpointContents {
  model::MaskedLm model;
  torch::optim::Optimizer& optimizer;
  TrainerState& state;
  const text::Tokenizer& tokenizer;
  std::function<nlohmann::json()> data_position;  // this rank's position in its data source
  std::function<std::optional<LossScaleState>()> loss_scale;  // fp16's scaler state, else none
  EmaWeights* ema = nullptr;  // train.ema_decay > 0: the shadow weights, kept as ema.pt
  // Distillation's cosine projection (distiller.h), saved as distill_projection.pt; null: none.
  std::shared_ptr<torch::nn::Module> distill_projection = nullptr;
};

class RunCheckpoints {
 public:
  /// Takes train.output_dir's lock on rank 0 (UsageError on every rank when another process
  /// holds it) and settles the resume mode: `resume` (--resume), else train.resume, else auto
  /// when `restart_count` > 0, else a new run. Collective.
  RunCheckpoints(const config::RunConfig& config, std::shared_ptr<dist::Communicator> comm,
                 std::string resume, int restart_count);

  /// Resumes from the checkpoint the mode names, when there is one: restores the weights, the
  /// optimizer, this rank's RNG and the trainer state into `contents` and returns this rank's
  /// data position. A checkpoint of another world size continues with the same global batch:
  /// each rank's position is the saved step boundary of the one global stream
  /// (data::reshard_position), each rank's RNG the saved one of its rank where there was one. A new run returns nullopt, after refusing a directory that already holds
  /// complete checkpoints. Throws ConfigError / CheckpointError / UsageError. Collective.
  std::optional<nlohmann::json> resume_or_refuse(const CheckpointContents& contents);

  /// resume_or_refuse() in two halves, for a run that needs the checkpoint's trainer state
  /// before it can build what the checkpoint restores (the phase's optimizer): the checkpoint
  /// this start resumes from (nullopt: a new run, after the refusal), then the restore, given
  /// the checkpoint's trainer_state.json as the caller read it (TrainerState::load; read once).
  std::optional<std::filesystem::path> find_resume() const;
  nlohmann::json resume_from(const std::filesystem::path& dir, const CheckpointContents& contents,
                             TrainerState state);

  /// Writes a checkpoint of contents.state.step (rank 0 writes, after gathering every rank's
  /// data position and RNG state) and prunes to checkpoint.keep_last. A failed write throws
  /// CheckpointError on every rank. Collective.
  std::filesystem::path save(const CheckpointContents& contents);

  /// The step of the newest checkpoint this run wrote or resumed from (-1: none).
  int64_t last_step() const { return last_step_; }
  /// The step this run resumed at; nullopt for a new run.
  std::optional<int64_t> resumed_step() const { return resumed_step_; }

 private:
  std::filesystem::path checkpoints_dir() const { return output_dir_ / "checkpoints"; }
  std::optional<std::filesystem::path> resolve_resume() const;
  void refuse_existing_checkpoints() const;
  /// A checkpoint of another world size continues only with its global batch (sequences per
  /// optimizer step): ConfigError saying which product of the batch keys makes it.
  void require_same_global_batch(const config::RunConfig& saved_config, const TrainerState& state,
                                 const std::filesystem::path& dir) const;

  const config::RunConfig& config_;
  std::shared_ptr<dist::Communicator> comm_;
  std::filesystem::path output_dir_;
  std::optional<RunLock> lock_;  // rank 0: this run is the directory's one writer
  std::string resume_;           // "" (a new run), auto, latest or a checkpoint directory
  int64_t last_step_ = -1;
  std::optional<int64_t> resumed_step_;
};

}  // namespace mlm::train

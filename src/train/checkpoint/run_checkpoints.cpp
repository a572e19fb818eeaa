#include "mlm/train/checkpoint/run_checkpoints.h"

#include "mlm/config/config_loader.h"
#include "mlm/config/phases.h"
#include "mlm/data/open_sequences.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/checkpoint/config_diff.h"
#include "mlm/train/checkpoint/rng_state.h"
#include "mlm/train/optim/ema_weights.h"
#include "mlm/util/errors.h"
#include "mlm/util/fnv1a.h"
#include "mlm/util/logging.h"

namespace mlm::train {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

/// --resume, else train.resume, else auto in a restarted worker group, else "" (a new run).
std::string resume_mode(const std::string& requested, const config::RunConfig& config,
                        int restart_count) {
  if (!requested.empty()) return requested;
  if (!config.train.resume.empty()) return config.train.resume;
  if (restart_count > 0) {
    log::info("ckpt", "restart {} of the worker group (TORCHELASTIC_RESTART_COUNT): resuming "
              "as --resume auto", restart_count);
    return "auto";
  }
  return "";
}

constexpr const char* kDistillProjectionFile = "distill_projection.pt";

}  // namespace

const std::vector<std::string>& checkpoint_required_files() {
  static const std::vector<std::string> files = {"model.pt", "optimizer.pt", "trainer_state.json",
                                                 "config.yaml", "tokenizer.model"};
  return files;
}

RunCheckpoints::RunCheckpoints(const config::RunConfig& config,
                               std::shared_ptr<dist::Communicator> comm, std::string resume,
                               int restart_count)
    : config_(config), comm_(std::move(comm)), output_dir_(config.train.output_dir) {
  // Rank 0 writes, so rank 0 holds the lock; every rank learns whether it got it.
  std::string refused;
  if (comm_->is_main()) {
    try {
      lock_.emplace(output_dir_);
    } catch (const UsageError& e) {
      refused = e.what();
    }
  }
  refused = comm_->all_gather_strings(refused).front();
  if (!refused.empty()) throw UsageError(refused);
  resume_ = resume_mode(resume, config_, restart_count);
}

std::optional<nlohmann::json> RunCheckpoints::resume_or_refuse(const CheckpointContents& contents) {
  const auto dir = find_resume();
  if (!dir) return std::nullopt;
  return resume_from(*dir, contents, TrainerState::load(*dir / "trainer_state.json"));
}

std::optional<fs::path> RunCheckpoints::find_resume() const {
  auto dir = resolve_resume();
  if (!dir && resume_.empty()) refuse_existing_checkpoints();
  return dir;
}

fs::path RunCheckpoints::save(const CheckpointContents& contents) {
  TrainerState& state = contents.state;
  // Every rank's data position and RNG state, gathered to rank 0 (collective).
  const nlohmann::json mine = {{"data_position", contents.data_position()},
                               {"rng", capture_rng_state()}};
  const auto gathered = comm_->all_gather_strings(mine.dump());
  state.world_size = comm_->world_size();
  state.ranks.clear();
  for (const auto& text : gathered) {
    const auto json = nlohmann::json::parse(text);
    state.ranks.push_back({json.at("data_position"), json.at("rng")});
  }
  if (contents.loss_scale) state.loss_scale = contents.loss_scale();
  const std::string config_yaml = config::dump_config(config_);
  state.config_hash = fnv1a_hex(config_yaml);

  const fs::path checkpoints = checkpoints_dir();
  fs::path written;
  std::string error;
  if (comm_->is_main()) {
    try {
      written = write_checkpoint_dir(checkpoints, state.step, [&](const fs::path& tmp) {
        model::save_model_pt(contents.model, (tmp / "model.pt").string());
        torch::save(contents.optimizer, (tmp / "optimizer.pt").string());
        if (contents.ema) contents.ema->save(tmp / kEmaFileName);
        if (contents.distill_projection) {
          torch::serialize::OutputArchive archive;
          contents.distill_projection->save(archive);
          archive.save_to((tmp / kDistillProjectionFile).string());
        }
        write_file_durably(tmp / "trainer_state.json", state.to_json().dump(2) + "\n");
        write_file_durably(tmp / "config.yaml", config_yaml);
        write_file_durably(tmp / "tokenizer.model", contents.tokenizer.serialized_model());
      });
      prune_checkpoints(checkpoints, config_.checkpoint.keep_last, checkpoint_required_files());
    } catch (const std::exception& e) {
      error = first_line(e.what());
    }
  }
  // A failed write stops every rank, not just the writer.
  const auto failed = comm_->sum_across_ranks({error.empty() ? 0.0 : 1.0});
  if (failed[0] > 0) {
    if (!error.empty()) throw CheckpointError(error);
    throw CheckpointError("rank 0 failed to write the checkpoint of step " +
                          std::to_string(state.step));
  }
  last_step_ = state.step;
  return written;
}

void RunCheckpoints::require_same_global_batch(const config::RunConfig& saved_config,
                                               const TrainerState& state, const fs::path& dir) const {
  const int world = comm_->world_size();
  if (state.phase >= config::phase_count(saved_config) || state.phase >= config::phase_count(config_)) {
    throw CheckpointError((dir / "trainer_state.json").string() + ": phase " + std::to_string(state.phase) +
                          " is not in the run's phases");
  }
  const auto& then = config::phase_config(saved_config, state.phase).train;
  const auto& now = config::phase_config(config_, state.phase).train;
  const int64_t saved_batch = then.micro_batch_size * then.grad_accum_steps * state.world_size;
  const int64_t batch = now.micro_batch_size * now.grad_accum_steps * world;
  if (batch == saved_batch) return;
  const std::string written = "cannot resume " + dir.string() + " on " + std::to_string(world) +
                              " rank(s): it was written by " + std::to_string(state.world_size) +
                              " with a global batch of " + std::to_string(saved_batch) + " sequences";
  if (saved_batch % world != 0) {
    throw ConfigError(written + ", which " + std::to_string(world) +
                          " ranks cannot split evenly; resume on a world size that divides it",
                      "distributed");
  }
  throw ConfigError(written + ", this run's is " + std::to_string(world) + " x train.micro_batch_size " +
                        std::to_string(now.micro_batch_size) + " x train.grad_accum_steps " +
                        std::to_string(now.grad_accum_steps) + " = " + std::to_string(batch) +
                        "; set their product to " + std::to_string(saved_batch / world) +
                        " to continue the same run",
                    "train.micro_batch_size");
}

std::optional<fs::path> RunCheckpoints::resolve_resume() const {
  if (resume_.empty()) return std::nullopt;
  const fs::path checkpoints = checkpoints_dir();
  if (resume_ == "latest" || resume_ == "auto") {
    // Rank 0 decides, so every rank resumes from the same directory.
    std::string found;
    if (comm_->is_main()) {
      if (auto latest = find_latest_checkpoint(checkpoints, checkpoint_required_files())) {
        found = latest->string();
      }
    }
    found = comm_->all_gather_strings(found).front();
    if (found.empty()) {
      log::info("ckpt", "--resume {}: no complete checkpoint in {}; starting a new run", resume_,
                checkpoints.string());
      return std::nullopt;
    }
    return fs::path(found);
  }
  const fs::path dir = resume_;
  if (!fs::is_directory(dir)) {
    throw CheckpointError("--resume " + dir.string() + ": no such checkpoint directory");
  }
  return dir;
}

void RunCheckpoints::refuse_existing_checkpoints() const {
  const fs::path checkpoints = checkpoints_dir();
  std::error_code ec;
  if (!fs::is_directory(checkpoints, ec)) return;
  for (const auto& entry : fs::directory_iterator(checkpoints, ec)) {
    if (parse_checkpoint_step(entry.path().filename().string()) &&
        fs::exists(entry.path() / "DONE")) {
      throw UsageError("train.output_dir " + output_dir_.string() +
                       " already holds checkpoints (e.g. " + entry.path().string() +
                       "); continue that run with --resume auto, or choose another "
                       "train.output_dir");
    }
  }
}

nlohmann::json RunCheckpoints::resume_from(const fs::path& dir, const CheckpointContents& contents,
                                           TrainerState state) {
  verify_checkpoint_dir(dir, checkpoint_required_files());

  const fs::path config_path = dir / "config.yaml";
  config::RunConfig saved_config;
  try {
    saved_config = config::load_config(config_path.string());
  } catch (const ConfigError& e) {
    throw CheckpointError(config_path.string() + ": " + e.what());
  }
  check_resume_compatible(saved_config, config_, dir.string(),
                          resume_ == "auto" ? ResumeRule::same_model_and_data
                                            : ResumeRule::same_model);
  if (read_file_bytes(dir / "tokenizer.model") != contents.tokenizer.serialized_model()) {
    throw ConfigError("tokenizer.model: " + config_.tokenizer.model +
                          " is not the tokenizer checkpoint " + dir.string() +
                          " was trained with (its copy is " + (dir / "tokenizer.model").string() +
                          ")",
                      "tokenizer.model");
  }

  const fs::path state_path = dir / "trainer_state.json";  // read by the caller; named in errors
  const bool resharded = state.world_size != comm_->world_size();
  if (resharded) require_same_global_batch(saved_config, state, dir);

  model::load_model_pt(contents.model, (dir / "model.pt").string());
  if (contents.distill_projection) {
    const fs::path path = dir / kDistillProjectionFile;
    if (!fs::exists(path)) {
      throw CheckpointError(path.string() + ": missing; the run's distill.cos_weight across widths trains a projection "
                            "this checkpoint lacks");
    }
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(path.string(), contents.model->parameters().front().device());
      contents.distill_projection->load(archive);
    } catch (const std::exception& e) {
      throw CheckpointError(path.string() + ": cannot load the distillation projection: " + first_line(e.what()));
    }
  }
  const fs::path optimizer_path = dir / "optimizer.pt";
  try {
    // The moments go where the weights are.
    const auto device = contents.model->parameters().front().device();
    torch::load(contents.optimizer, optimizer_path.string(), device);
  } catch (const std::exception& e) {
    throw CheckpointError(optimizer_path.string() + ": cannot load the optimizer state: " +
                          first_line(e.what()));
  }
  if (contents.ema) {
    // The shadow is replicated: every rank reads the one file, whatever the world size.
    if (fs::exists(dir / kEmaFileName)) {
      contents.ema->load(dir / kEmaFileName);
    } else {
      contents.ema->restart();
      log::info("ckpt", "{} holds no EMA weights ({}): the EMA starts from its weights", dir.string(),
                kEmaFileName);
    }
  }
  nlohmann::json position;
  const auto rank = static_cast<size_t>(comm_->rank());
  if (!resharded) {
    restore_rng_state(state.ranks[rank].rng, state_path.string());
    position = state.ranks[rank].data_position;
  } else {
    // Every new rank continues the one global stream at the step boundary; a rank the
    // checkpoint had keeps its dropout stream, a new one keeps the stream train.seed gave it.
    std::vector<nlohmann::json> positions;
    for (const auto& saved : state.ranks) positions.push_back(saved.data_position);
    position = data::reshard_position(positions, comm_->rank(), comm_->world_size());
    if (rank < state.ranks.size()) restore_rng_state(state.ranks[rank].rng, state_path.string());
    log::info("ckpt", "{} was written by {} rank(s); continuing it on {}: the same global batch, "
              "sequences and masks", dir.string(), state.world_size, comm_->world_size());
  }
  if (!position.is_object()) {
    throw CheckpointError(state_path.string() + ": bad data position: expected a JSON object");
  }

  contents.state = std::move(state);
  resumed_step_ = contents.state.step;
  last_step_ = contents.state.step;
  log::info("ckpt", "resumed from {} at step {} ({} tokens seen)", dir.string(),
            contents.state.step, contents.state.tokens_seen);
  return position;
}

}  // namespace mlm::train

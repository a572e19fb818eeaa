#include "mlm/train/trainer.h"

#include <cmath>
#include <csignal>
#include <cstdlib>

#include "mlm/config/config_loader.h"
#include "mlm/train/autocast.h"
#include "mlm/train/batch_tensors.h"
#include "mlm/train/checkpoint_dir.h"
#include "mlm/train/device.h"
#include "mlm/train/grad_clip.h"
#include "mlm/train/optimizer.h"
#include "mlm/train/stop_signals.h"
#include "mlm/train/sum_across_ranks.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {
namespace {

/// "N" or "N-M" from MLM_TEST_POISON_STEP; {-1, -1} when unset.
std::pair<int64_t, int64_t> parse_poison_steps() {
  const char* value = std::getenv(kPoisonStepEnv);
  if (!value || !*value) return {-1, -1};
  const std::string text = value;
  try {
    const auto dash = text.find('-');
    if (dash == std::string::npos) {
      const int64_t step = std::stoll(text);
      return {step, step};
    }
    return {std::stoll(text.substr(0, dash)), std::stoll(text.substr(dash + 1))};
  } catch (const std::exception&) {
    throw UsageError(std::string(kPoisonStepEnv) + "='" + text + "': expected N or N-M");
  }
}

/// The decay horizon: train.max_steps, or the steps train.max_tokens amounts to.
int64_t schedule_horizon(const config::RunConfig& config, int world_size) {
  if (config.train.max_steps > 0) return config.train.max_steps;
  if (config.train.max_tokens > 0) {
    const int64_t tokens_per_step = config.train.micro_batch_size * config.train.grad_accum_steps *
                                    world_size * config.data.seq_len;
    return (config.train.max_tokens + tokens_per_step - 1) / tokens_per_step;
  }
  return 0;
}

}  // namespace

const std::vector<std::string>& checkpoint_required_files() {
  static const std::vector<std::string> files = {"model.pt", "optimizer.pt", "trainer_state.json",
                                                 "config.yaml", "tokenizer.model"};
  return files;
}

Trainer::Trainer(config::RunConfig config, TrainerOptions options)
    : config_(std::move(config)), options_(std::move(options)) {
  const auto env = options_.comm ? dist::DistEnv{} : dist::DistEnv::from_environment();
  device_ = options_.comm ? options_.comm->device()
                          : resolve_device(config_.train.device, env.local_rank);
  configure_threads(config_.train.threads, env.local_world_size);
  configure_memory();
  bf16_ = use_bf16(config_.train.precision, device_);
  if (bf16_ && device_.is_cpu() && !cpu_has_fast_bf16()) {
    log::warn("train", "train.precision bf16 on a CPU without AVX512-BF16: LibTorch's bf16 "
              "matrix products take a slow scalar path here; fp32 (or auto) is much faster");
  }
  if (options_.comm) {
    comm_ = options_.comm;
  } else if (env.is_distributed()) {
    comm_ = dist::Communicator::create(env, config_.distributed, device_);
  } else {
    comm_ = dist::Communicator::single_process(device_);
  }
  log::set_rank(comm_->rank());
  poison_steps_ = parse_poison_steps();
  output_dir_ = config_.train.output_dir;

  // Rank 0 trains the tokenizer when it is missing; the others load it afterwards.
  if (comm_->is_main()) tokenizer_.emplace(text::ensure_tokenizer(config_));
  comm_->barrier();
  if (!comm_->is_main()) tokenizer_.emplace(text::ensure_tokenizer(config_));
  const auto& vocab = tokenizer_->vocab();
  if (config_.model.vocab_size > 0 && config_.model.vocab_size != vocab.size) {
    throw ConfigError("model.vocab_size (" + std::to_string(config_.model.vocab_size) +
                          ") differs from the tokenizer's " + std::to_string(vocab.size) +
                          " pieces (" + config_.tokenizer.model +
                          "); set 0 to take the tokenizer's size",
                      "model.vocab_size");
  }

  // Every rank builds the same initial weights from train.seed; dropout then draws from a
  // per-rank stream (rank 0 keeps train.seed, so one process is unchanged).
  torch::manual_seed(static_cast<uint64_t>(config_.train.seed));
  model_ = model::BertForPreTraining(config_.model, vocab.size, vocab.ids.pad);
  if (!config_.model.init_from.empty()) {
    model::init_from_pretrained(model_, config_.model.init_from);
  }
  model_->to(device_);
  model_->train();
  if (comm_->rank() > 0) {
    torch::manual_seed(static_cast<uint64_t>(config_.train.seed) + static_cast<uint64_t>(comm_->rank()));
  }

  optimizer_ = make_adamw(*model_, config_.optim);
  const auto groups = split_parameters(*model_);
  params_ = groups.decay;
  params_.insert(params_.end(), groups.no_decay.begin(), groups.no_decay.end());
  if (comm_->world_size() > 1) {
    reducer_ = std::make_unique<dist::GradientReducer>(comm_, params_, config_.distributed.bucket_mb);
  }
  schedule_ = std::make_unique<LrSchedule>(config_.schedule, config_.optim.learning_rate,
                                           schedule_horizon(config_, comm_->world_size()));
  collator_ = std::make_unique<masking::MaskingCollator>(config_.masking, vocab, config_.data.seq_len,
                                                         config_.model.objective);

  std::optional<data::DataPosition> position;
  if (const auto dir = resolve_resume()) {
    position = resume_from(*dir);
  } else if (options_.resume.empty()) {
    refuse_existing_checkpoints();
  }
  dataset_ = std::make_unique<data::StreamingDataset>(config_, *tokenizer_, data::Split::train,
                                                      comm_->rank(), comm_->world_size(), position);

  if (comm_->is_main()) {
    std::filesystem::create_directories(output_dir_);
    write_file_durably(output_dir_ / "config.yaml", config::dump_config(config_));
    metrics_ = std::make_unique<MetricsLog>(output_dir_ / "metrics.jsonl", resumed_step_);
  }
  progress_ = std::make_unique<ProgressLine>(comm_->is_main() &&
                                             progress_bar_wanted(config_.logging.progress_bar));
}

Trainer::~Trainer() = default;

bool Trainer::poisoned(int64_t step) const {
  return poison_steps_.first >= 0 && step >= poison_steps_.first && step <= poison_steps_.second;
}

void Trainer::train_step(StepStats& stats) {
  const int64_t step = state_.step + 1;
  const double lr = schedule_->at(step);
  set_learning_rate(*optimizer_, lr);

  // The step's micro-batches, masked with train.seed: each mask depends only on the seed and
  // the sequence's sample id, so a resumed run masks exactly as the uninterrupted one.
  std::vector<masking::MaskedBatch> micro_batches;
  double masked = 0, pairs = 0, tokens = 0;
  std::vector<data::PackedSequence> rows;
  for (int64_t m = 0; m < config_.train.grad_accum_steps; ++m) {
    rows.clear();
    data::PackedSequence sequence;
    while (static_cast<int64_t>(rows.size()) < config_.train.micro_batch_size) {
      // The train split never ends (epoch after epoch; an empty epoch is a DataError).
      if (!dataset_->next(sequence)) throw std::logic_error("the train split ended");
      rows.push_back(std::move(sequence));
    }
    micro_batches.push_back((*collator_)(rows, static_cast<uint64_t>(config_.train.seed)));
    masked += static_cast<double>(micro_batches.back().num_masked());
    pairs += static_cast<double>(micro_batches.back().nsp_labels.size());
    tokens += static_cast<double>(count_tokens(micro_batches.back()));
  }
  // The loss normaliser is the masked count of the whole step on all ranks.
  const auto global = sum_across_ranks(*comm_, {masked, pairs, tokens});
  const double global_masked = std::max(global[0], 1.0);
  const double global_pairs = std::max(global[1], 1.0);

  optimizer_->zero_grad();
  double loss_sum = 0, correct = 0, nsp_loss_sum = 0, nsp_correct = 0;
  for (const auto& batch : micro_batches) {
    const auto inputs = to_bert_inputs(batch, device_);
    model::BertOutput out;
    {
      AutocastScope autocast(bf16_, device_);
      out = model_->forward(inputs);
    }
    auto loss = out.mlm_loss_sum / global_masked;
    loss_sum += out.mlm_loss_sum.item<double>();
    correct += static_cast<double>(out.mlm_correct.item<int64_t>());
    if (out.nsp_loss_sum.defined()) {
      loss = loss + out.nsp_loss_sum / global_pairs;
      nsp_loss_sum += out.nsp_loss_sum.item<double>();
      nsp_correct += static_cast<double>(out.nsp_correct.item<int64_t>());
    }
    loss.backward();
  }
  if (poisoned(step) && !params_.empty() && params_.front().grad().defined()) {
    params_.front().grad().fill_(std::numeric_limits<float>::quiet_NaN());
  }
  if (reducer_) reducer_->reduce();
  // Every rank holds the same summed gradients now, so the norm (and the skip decision) agree.
  const double grad_norm = clip_grad_norm(params_, config_.optim.max_grad_norm);
  const auto sums = sum_across_ranks(*comm_, {loss_sum, correct, nsp_loss_sum, nsp_correct});

  stats.step = step;
  stats.lr = lr;
  stats.grad_norm = grad_norm;
  stats.num_masked = static_cast<int64_t>(global[0]);
  stats.tokens = static_cast<int64_t>(global[2]);
  stats.loss = sums[0] / global_masked + (global[1] > 0 ? sums[2] / global_pairs : 0.0);
  stats.mlm_accuracy = sums[1] / global_masked;
  stats.skipped = !std::isfinite(grad_norm) || !std::isfinite(stats.loss);
  if (stats.skipped) {
    optimizer_->zero_grad();
    ++state_.skipped_steps;
    ++state_.consecutive_skipped;
    log::warn("train", "step {}: non-finite {} (loss {}, grad norm {}); step skipped ({} in a row, "
              "{} in total)", step, std::isfinite(stats.loss) ? "gradient" : "loss", stats.loss,
              grad_norm, state_.consecutive_skipped, state_.skipped_steps);
    if (state_.consecutive_skipped >= config_.train.max_skipped_steps) {
      throw std::runtime_error(
          "training diverged: " + std::to_string(state_.consecutive_skipped) +
          " non-finite steps in a row (train.max_skipped_steps) at step " + std::to_string(step) +
          "; the last good checkpoint is in " + (output_dir_ / "checkpoints").string() +
          " (try a lower optim.learning_rate or longer warmup)");
    }
  } else {
    optimizer_->step();
    state_.consecutive_skipped = 0;
  }
  state_.step = step;
  state_.tokens_seen += stats.tokens;

  window_.tokens += global[2];
  if (stats.skipped) return;  // a skipped step's NaN must not poison the averages
  window_.loss_sum += sums[0];
  window_.correct += sums[1];
  window_.masked += global[0];
  window_.nsp_loss_sum += sums[2];
  window_.nsp_correct += sums[3];
  window_.nsp_pairs += global[1];
}

void Trainer::pause_window(SteadyClock::time_point since) {
  // Evaluation and checkpoints do not count against the training throughput.
  window_.start += SteadyClock::now() - since;
}

int Trainer::run() {
  StopSignals signals;
  run_start_ = SteadyClock::now();
  run_start_step_ = state_.step;
  run_start_tokens_ = state_.tokens_seen;
  train_time_at_start_ = state_.train_time_s;
  window_ = Window{};
  const auto& t = config_.train;
  const int64_t global_batch = t.micro_batch_size * t.grad_accum_steps * comm_->world_size();
  log::info("train",
            "{} parameters on {} ({}), {} rank(s); global batch {} sequences x {} tokens; "
            "{} threads; from step {}",
            model::count_parameters(*model_), device_.str(), bf16_ ? "bf16" : "fp32",
            comm_->world_size(), global_batch, config_.data.seq_len, torch::get_num_threads(),
            state_.step);

  auto finished = [&] {
    return (t.max_steps > 0 && state_.step >= t.max_steps) ||
           (t.max_tokens > 0 && state_.tokens_seen >= t.max_tokens);
  };
  int exit_code = kExitOk;
  while (!finished()) {
    StepStats stats;
    train_step(stats);
    state_.train_time_s = train_time_at_start_ + seconds_since(run_start_);
    if (on_step_) on_step_(stats);
    log_step(stats);
    const int64_t step = state_.step;
    if (config_.eval.every_steps > 0 && step % config_.eval.every_steps == 0) {
      const auto since = SteadyClock::now();
      evaluate_and_log();
      pause_window(since);
    }
    if (config_.checkpoint.every_steps > 0 && step % config_.checkpoint.every_steps == 0) {
      const auto since = SteadyClock::now();
      save_checkpoint();
      pause_window(since);
    }
    // Step boundary: signals and the wall clock, agreed on by every rank.
    const int signal = StopSignals::pending();
    const bool out_of_time = t.max_time_s > 0 && seconds_since(run_start_) >= t.max_time_s;
    const auto flags = sum_across_ranks(
        *comm_, {signal == SIGINT ? 1.0 : 0.0, signal == SIGTERM ? 1.0 : 0.0, out_of_time ? 1.0 : 0.0});
    if (flags[0] > 0 || flags[1] > 0) {
      exit_code = flags[1] > 0 ? kExitSigterm : kExitSigint;
      progress_->clear();
      log::warn("train", "{} received: writing a checkpoint at step {} and stopping",
                flags[1] > 0 ? "SIGTERM" : "SIGINT", step);
      break;
    }
    if (flags[2] > 0) {
      progress_->clear();
      log::info("train", "train.max_time_s ({}s) reached at step {}", t.max_time_s, step);
      break;
    }
  }
  progress_->clear();
  state_.train_time_s = train_time_at_start_ + seconds_since(run_start_);
  if (exit_code == kExitOk && last_eval_step_ != state_.step) evaluate_and_log();
  if (last_checkpoint_step_ != state_.step) save_checkpoint();
  log::info("train", "stopped at step {} after {} tokens; {} skipped step(s); {} this run",
            state_.step, state_.tokens_seen, state_.skipped_steps,
            format_duration(seconds_since(run_start_)));
  return exit_code;
}

void Trainer::log_step(const StepStats& stats) {
  if (!comm_->is_main()) return;
  const auto& t = config_.train;
  const double elapsed = seconds_since(run_start_);
  const double steps_done = static_cast<double>(stats.step - run_start_step_);
  // ETA from this run's pace: steps (or tokens) left, bounded by max_time_s.
  double eta = std::numeric_limits<double>::quiet_NaN();
  if (t.max_steps > 0 && steps_done > 0) {
    eta = elapsed / steps_done * static_cast<double>(t.max_steps - stats.step);
  } else if (const int64_t run_tokens = state_.tokens_seen - run_start_tokens_;
             t.max_tokens > 0 && run_tokens > 0) {
    eta = elapsed * static_cast<double>(t.max_tokens - state_.tokens_seen) /
          static_cast<double>(run_tokens);
  }
  if (t.max_time_s > 0) eta = std::isnan(eta) ? t.max_time_s - elapsed : std::min(eta, t.max_time_s - elapsed);
  const std::string total = t.max_steps > 0 ? std::to_string(t.max_steps) : "?";

  const bool log_now = config_.logging.every_steps > 0 && stats.step % config_.logging.every_steps == 0;
  if (!log_now) {
    progress_->update(fmt::format("step {}/{} loss {:.4f} acc {:.4f} lr {:.2e} | {} ETA {}",
                                  stats.step, total, stats.loss, stats.mlm_accuracy, stats.lr,
                                  format_duration(elapsed), format_duration(eta)));
    return;
  }
  const double window_s = std::max(1e-9, seconds_since(window_.start));
  // A window of skipped steps only has no loss: NaN, written as null (not a misleading 0).
  const double masked = window_.masked > 0 ? window_.masked : std::nan("");
  const double loss = window_.loss_sum / masked +
                      (window_.nsp_pairs > 0 ? window_.nsp_loss_sum / window_.nsp_pairs : 0.0);
  const double accuracy = window_.correct / masked;
  const double tokens_per_s = window_.tokens / window_s;
  nlohmann::json row = {{"step", stats.step},
                        {"tokens", state_.tokens_seen},
                        {"loss", loss},
                        {"mlm_accuracy", accuracy},
                        {"lr", stats.lr},
                        {"grad_norm", stats.grad_norm},
                        {"tokens_per_s", tokens_per_s},
                        {"elapsed_s", state_.train_time_s}};
  if (window_.nsp_pairs > 0) row["nsp_accuracy"] = window_.nsp_correct / window_.nsp_pairs;
  if (state_.skipped_steps > 0) row["skipped_steps"] = state_.skipped_steps;
  metrics_->write(row);
  progress_->clear();
  log::info("train", "step {}/{} | loss {:.4f} | acc {:.4f} | lr {:.3e} | grad {:.3f} | {} tok/s | "
            "{} elapsed | ETA {}{}",
            stats.step, total, loss, accuracy, stats.lr, stats.grad_norm,
            format_count(tokens_per_s), format_duration(elapsed), format_duration(eta),
            state_.skipped_steps > 0 ? fmt::format(" | {} skipped", state_.skipped_steps) : "");
  window_ = Window{};
}

EvalResult Trainer::evaluate_and_log() {
  const auto result = evaluate(model_, config_, *tokenizer_, *comm_, device_);
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

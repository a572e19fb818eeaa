#include "mlm/train/run/bootstrap.h"

#include "mlm/config/validate.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/train/run/device.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {
namespace {

/// Threads and memory for a process computing on `device`, one of `local_world_size` on
/// its node (they share its cores).
Process start(const config::RunConfig& config, torch::Device device, int local_world_size) {
  Process process;
  process.device = device;
  configure_threads(config.train.threads, local_world_size);
  configure_memory();
  process.compute_dtype = compute_dtype(config.train.precision, device);
  if (process.compute_dtype == torch::kBFloat16 && device.is_cpu() && !cpu_has_fast_bf16()) {
    log::warn("train", "train.precision bf16 on a CPU without AVX512-BF16: LibTorch's bf16 "
              "matrix products take a slow scalar path here; fp32 (or auto) is much faster");
  }
  return process;
}

}  // namespace

Process bootstrap(const config::RunConfig& config, Launch launch) {
  const auto env = launch == Launch::from_environment ? dist::DistEnv::from_environment()
                                                      : dist::DistEnv{};
  auto process = start(config, resolve_device(config.train.device, env.local_rank),
                       env.local_world_size);
  process.comm = env.is_distributed()
                     ? dist::Communicator::create(env, config.distributed, process.device)
                     : dist::Communicator::single_process(process.device);
  process.restart_count = env.restart_count;
  log::set_rank(process.comm->rank());
  return process;
}

Process bootstrap(const config::RunConfig& config, std::shared_ptr<dist::Communicator> comm) {
  auto process = start(config, comm->device(), /*local_world_size=*/1);
  process.comm = std::move(comm);
  log::set_rank(process.comm->rank());
  return process;
}

text::Tokenizer open_tokenizer(const config::RunConfig& config, dist::Communicator& comm) {
  std::optional<text::Tokenizer> tokenizer;
  if (comm.is_main()) tokenizer.emplace(text::load_or_train_tokenizer(config.tokenizer, config.data));
  comm.barrier();
  if (!comm.is_main()) tokenizer.emplace(text::load_or_train_tokenizer(config.tokenizer, config.data));
  const int64_t size = tokenizer->size();
  if (config.model.vocab_size > 0 && config.model.vocab_size < size) {
    throw ConfigError("model.vocab_size (" + std::to_string(config.model.vocab_size) +
                          ") is smaller than the tokenizer's " + std::to_string(size) + " pieces (" +
                          config.tokenizer.model + "); set 0 to take the tokenizer's size",
                      "model.vocab_size");
  }
  return std::move(*tokenizer);
}

model::MaskedLm build_model(const config::RunConfig& config, const text::VocabInfo& vocab, const torch::Device& device) {
  config::require_position_room(config.model, config.data.seq_len, vocab.ids.pad);
  torch::manual_seed(static_cast<uint64_t>(config.train.seed));
  auto model = model::make_masked_lm(config.model, model::embedding_rows(config.model, vocab.size), vocab.ids.pad);
  if (!config.model.init_from.empty()) {
    // tokenizer.add_tokens: the pretrained rows grow by the new tokens, each its pieces' mean.
    // A resume loads model.pt (the grown rows as trained) over these.
    std::vector<model::NewTokenRow> new_tokens;
    for (const auto& token : vocab.added_tokens)
      new_tokens.push_back({token.id, std::vector<int64_t>(token.pieces.begin(), token.pieces.end())});
    as_user_input([&] { model::init_from_pretrained(model, config.model.init_from, new_tokens); });
  }
  model->to(device);
  model->train();
  return model;
}

}  // namespace mlm::train

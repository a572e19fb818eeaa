#pragma once
// Process set-up shared by mlm-train, mlm-eval and mlm-bench, written once in its one order:
// environment -> device -> threads -> memory -> communicator. Then what every run builds on
// top: its tokenizer (checked against model.vocab_size) and its initial model.
#include <torch/torch.h>

#include <memory>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"

namespace mlm::train {

struct Process {
  torch::Device device{torch::kCPU};
  torch::Dtype compute_dtype = torch::kFloat32;  // train.precision resolved for the device
  std::shared_ptr<dist::Communicator> comm;
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT: > 0 in a restarted worker group
};

enum class Launch {
  from_environment,  // the torchrun variables (none: a single process)
  single_process,    // this process alone, whatever the environment says (mlm-bench)
};

Process bootstrap(const config::RunConfig& config, Launch launch = Launch::from_environment);

/// With a communicator made by the caller (tests, in-process ranks): its device and ranks.
Process bootstrap(const config::RunConfig& config, std::shared_ptr<dist::Communicator> comm);

/// The run's tokenizer on every rank: rank 0 trains it first when it is missing (and
/// tokenizer.train_if_missing), the others then load it. ConfigError naming model.vocab_size
/// when that is set and differs from the tokenizer's size.
text::Tokenizer open_tokenizer(const config::RunConfig& config, dist::Communicator& comm);

/// The initial weights, the same on every rank: drawn from train.seed, or model.init_from
/// when set; on `device`, in training mode.
model::MaskedLm build_model(const config::RunConfig& config,
                                      const text::VocabInfo& vocab, const torch::Device& device);

}  // namespace mlm::train

// The checkpoint component on its own, without a trainer: it saves what it is handed, restores
// it into other objects, refuses to start a new run over an old one and keeps one writer.
#include <gtest/gtest.h>

#include <algorithm>

#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/checkpoint/run_checkpoints.h"
#include "mlm/train/optim/optimizer.h"
#include "mlm/train/run/bootstrap.h"
#include "mlm/util/errors.h"
#include "train_test_util.h"

// Named, not anonymous: the unity build compiles the trainer tests together.
namespace mlm::train::run_checkpoints {

using namespace mlm::train::testing;

struct Held {  // what one run would own
  model::MaskedLm model{nullptr};
  std::unique_ptr<FusedAdamW> optimizer;
  TrainerState state;
  nlohmann::json position = {{"unused", true}};

  Held(const config::RunConfig& config, const text::Tokenizer& tokenizer, uint64_t seed) {
    torch::manual_seed(seed);
    model = build_model(config, tokenizer.vocab(), torch::kCPU);
    optimizer = make_adamw(*model, config.optim);
  }
  CheckpointContents contents(const text::Tokenizer& tokenizer) {
    return {model, *optimizer, state, tokenizer, [this] { return position; }};
  }
};

/// Each parameter's first-moment sum, sorted (the state map is keyed by tensor addresses).
std::vector<double> moment_sums(torch::optim::Optimizer& optimizer) {
  std::vector<double> sums;
  for (const auto& [key, state] : optimizer.state()) {
    const auto& adamw = static_cast<const torch::optim::AdamWParamState&>(*state);
    sums.push_back(adamw.exp_avg().sum().item<double>());
  }
  std::sort(sums.begin(), sums.end());
  return sums;
}

/// A run directory of its own, its config, and the tokenizer every Held shares.
struct RunDir {
  config::RunConfig config;
  std::shared_ptr<dist::Communicator> comm = dist::Communicator::single_process();
  text::Tokenizer tokenizer;

  explicit RunDir(const std::string& name)
      : config(tiny_config(fresh_dir(name) / "run")), tokenizer(open_tokenizer(config, *comm)) {}
};

TEST(RunCheckpoints, RestoresWhatItSavedIntoOtherObjects) {
  const RunDir run("run_checkpoints");
  const auto& [config, comm, tokenizer] = run;

  Held first(config, tokenizer, 1);
  first.state.step = 7;
  first.state.tokens_seen = 1234;
  first.position = {{"file", 2}, {"offset", 99}};
  // One optimizer step, so there are moments to save.
  for (auto& p : first.model->parameters()) p.mutable_grad() = torch::ones_like(p);
  first.optimizer->step();
  {
    RunCheckpoints checkpoints(config, comm, "", 0);
    ASSERT_FALSE(checkpoints.resume_or_refuse(first.contents(tokenizer)).has_value());
    const auto written = checkpoints.save(first.contents(tokenizer));
    EXPECT_EQ(written.filename(), checkpoint_dir_name(7));
    EXPECT_EQ(checkpoints.last_step(), 7);
    // The directory has its writer: a second one is refused while the first lives.
    EXPECT_THROW(RunCheckpoints(config, comm, "latest", 0), UsageError);
  }

  Held second(config, tokenizer, 2);
  RunCheckpoints checkpoints(config, comm, "latest", 0);
  const auto position = checkpoints.resume_or_refuse(second.contents(tokenizer));
  ASSERT_TRUE(position.has_value());
  EXPECT_EQ(*position, first.position);
  EXPECT_EQ(second.state.step, 7);
  EXPECT_EQ(second.state.tokens_seen, 1234);
  EXPECT_EQ(checkpoints.resumed_step(), 7);
  // The weights as saved (the vocabulary's padding rows are not part of a checkpoint).
  const auto a = first.model->hf_state_dict(), b = second.model->hf_state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  }
  EXPECT_EQ(moment_sums(*first.optimizer), moment_sums(*second.optimizer));
}

TEST(RunCheckpoints, ANewRunRefusesADirectoryWithCheckpoints) {
  const RunDir run("run_checkpoints_refuse");
  const auto& [config, comm, tokenizer] = run;
  Held held(config, tokenizer, 1);
  {
    RunCheckpoints checkpoints(config, comm, "", 0);
    checkpoints.resume_or_refuse(held.contents(tokenizer));
    checkpoints.save(held.contents(tokenizer));
  }
  {
    RunCheckpoints again(config, comm, "", 0);
    EXPECT_THROW(again.resume_or_refuse(held.contents(tokenizer)), UsageError);
  }
  // A restarted worker group (TORCHELASTIC_RESTART_COUNT > 0) resumes instead: auto.
  RunCheckpoints restarted(config, comm, "", 1);
  EXPECT_TRUE(restarted.resume_or_refuse(held.contents(tokenizer)).has_value());
}

}  // namespace mlm::train::run_checkpoints

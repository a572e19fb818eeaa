// Training from a prepared store (data.store) end to end through the Trainer: the same
// global batch split as accumulation steps takes the same optimizer steps, and a resumed run
// continues exactly, with the position an index into the store.
#include <gtest/gtest.h>

#include <csignal>

#include "mlm/data/store/store_writer.h"
#include "mlm/train/run/trainer.h"
#include "mlm/util/errors.h"
#include "train_test_util.h"

namespace mlm::train {
namespace prepared_store_training_test {

using namespace mlm::train::testing;

struct Run {
  std::vector<StepStats> steps;
  std::vector<torch::Tensor> params;
  nlohmann::json position;
  int exit_code = -1;
};

Run train(const config::RunConfig& config, const std::string& resume = "",
          std::function<void(const StepStats&)> on_step = nullptr) {
  Trainer trainer(config, {resume, nullptr});
  Run run;
  trainer.on_step([&](const StepStats& s) {
    run.steps.push_back(s);
    if (on_step) on_step(s);
  });
  run.exit_code = trainer.run();
  for (const auto& p : trainer.model()->parameters()) run.params.push_back(p.detach().clone());
  run.position = trainer.data_position();
  return run;
}

/// The tiny config reading a store prepared from its own corpus (once per test binary).
config::RunConfig store_config(const fs::path& out_dir, std::vector<std::string> extra) {
  static const fs::path store = [] {
    const fs::path dir = fresh_dir("prepared_store_training") / "store";
    auto config = tiny_config(dir.parent_path() / "unused", {"data.store=" + dir.string()});
    data::prepare_store(config.data, text::load_or_train_tokenizer(config.tokenizer, config.data), {});
    return dir;
  }();
  extra.push_back("data.store=" + store.string());
  return tiny_config(out_dir, std::move(extra));
}

void expect_same_params(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double atol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_LE((a[i] - b[i]).abs().max().item<double>(), atol) << "parameter " << i;
  }
}

const std::vector<std::string> kSteps = {"model.hidden_dropout_prob=0.0", "model.attention_probs_dropout_prob=0.0",
                                         "checkpoint.every_steps=0", "eval.every_steps=0", "eval.max_batches=1"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PreparedStoreTraining, AccumulationEqualsOneBigBatch) {
  const auto sets = with(kSteps, {"train.max_steps=3"});
  const auto one_by_eight = train(store_config(
      fresh_dir("prepared_1x8"), with(sets, {"train.micro_batch_size=8", "train.grad_accum_steps=1"})));
  const auto four_by_two = train(store_config(
      fresh_dir("prepared_4x2"), with(sets, {"train.micro_batch_size=2", "train.grad_accum_steps=4"})));
  ASSERT_EQ(one_by_eight.steps.size(), 3u);
  ASSERT_EQ(four_by_two.steps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(one_by_eight.steps[i].num_masked, four_by_two.steps[i].num_masked) << "step " << i + 1;
    EXPECT_NEAR(one_by_eight.steps[i].loss, four_by_two.steps[i].loss, 1e-6) << "step " << i + 1;
  }
  expect_same_params(one_by_eight.params, four_by_two.params, 1e-6);
  EXPECT_EQ(one_by_eight.position["kind"], "prepared");
  EXPECT_EQ(one_by_eight.position["samples"], four_by_two.position["samples"]);
}

TEST(PreparedStoreTraining, ResumeContinuesExactly) {
  const std::vector<std::string> sets = {"train.max_steps=8", "checkpoint.every_steps=0", "eval.every_steps=0",
                                         "eval.max_batches=1"};
  const auto straight = train(store_config(fresh_dir("prepared_straight"), sets));
  ASSERT_EQ(straight.exit_code, 0);
  ASSERT_EQ(straight.steps.size(), 8u);

  const auto dir = fresh_dir("prepared_split");
  const auto first = train(store_config(dir, sets), "", [](const StepStats& s) {
    if (s.step == 4) std::raise(SIGTERM);
  });
  EXPECT_EQ(first.exit_code, kExitSigterm);
  ASSERT_EQ(first.steps.size(), 4u);
  const auto second = train(store_config(dir, sets), "latest");
  ASSERT_EQ(second.exit_code, 0);
  ASSERT_EQ(second.steps.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(second.steps[i].loss, straight.steps[i + 4].loss) << "step " << i + 5;  // bit-equal
    EXPECT_EQ(second.steps[i].grad_norm, straight.steps[i + 4].grad_norm);
  }
  expect_same_params(straight.params, second.params, 0.0);
  EXPECT_EQ(straight.position, second.position);

  // The text path's position does not resume a store run.
  EXPECT_THROW(train(tiny_config(dir, sets), "latest"), ConfigError);
}

}  // namespace prepared_store_training_test
}  // namespace mlm::train

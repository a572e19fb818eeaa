// The trainer with optim.type lamb and stable_adamw on the tiny config: the loss falls, and a
// run stopped after step 6 and resumed is the uninterrupted run bit for bit (the optimizer's
// moments and device step counts go through the checkpoint).
#include <gtest/gtest.h>

#include "recorded_run.h"

// Named, not anonymous: the unity build compiles the trainer tests together.
namespace mlm::train::optimizer_types {

using namespace mlm::train::testing;

struct TypeCase {
  std::string type;
  std::vector<std::string> settings;  // what the type needs besides optim.type
};

class TrainerOptimizers : public ::testing::TestWithParam<TypeCase> {};

TEST_P(TrainerOptimizers, LossFallsAndResumeIsExact) {
  const auto& c = GetParam();
  std::vector<std::string> sets = {"optim.type=" + c.type, "train.max_steps=12",
                                   "checkpoint.every_steps=0", "eval.every_steps=0",
                                   "eval.max_batches=1"};
  sets.insert(sets.end(), c.settings.begin(), c.settings.end());
  const auto straight = run_trainer(tiny_config(fresh_dir("optim_" + c.type + "_straight"), sets));
  ASSERT_EQ(straight.exit_code, 0);
  ASSERT_EQ(straight.steps.size(), 12u);
  const auto mean_loss = [&](size_t from, size_t count) {
    double sum = 0;
    for (size_t i = from; i < from + count; ++i) sum += straight.steps[i].loss;
    return sum / static_cast<double>(count);
  };
  const double first = mean_loss(0, 3), last = mean_loss(9, 3);
  std::cout << "[ trainer ] " << c.type << ": mean loss of steps 1-3 " << first << ", of steps 10-12 "
            << last << "\n";
  EXPECT_LT(last, first - 0.1) << c.type << " did not train";  // it falls by ~0.25 here

  expect_stop_and_resume_equal(tiny_config(fresh_dir("optim_" + c.type + "_split"), sets), 6, straight);
}

INSTANTIATE_TEST_SUITE_P(
    Types, TrainerOptimizers,
    ::testing::Values(
        // LAMB's steps are relative to each tensor's norm: NVIDIA's BERT recipe runs at 6e-3.
        TypeCase{"lamb", {"optim.learning_rate=1e-2"}},
        // ModernBERT's settings, at tiny.yaml's learning rate.
        TypeCase{"stable_adamw", {"optim.weight_decay=1e-5", "optim.betas=[0.9, 0.98]"}}),
    [](const ::testing::TestParamInfo<TypeCase>& info) { return info.param.type; });

}  // namespace mlm::train::optimizer_types

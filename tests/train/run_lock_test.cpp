// One writer per run directory (run_lock.h): a second holder is refused naming the first, the
// lock goes with its holder, and a trainer refused by it has written nothing.
#include "mlm/train/checkpoint/run_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "mlm/train/run/trainer.h"
#include "mlm/util/errors.h"
#include "train_test_util.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

std::string usage_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(RunLock, ASecondHolderIsRefusedNamingTheFirstUntilTheFirstLetsGo) {
  const auto dir = fresh_dir("run_lock") / "run";
  {
    RunLock first(dir);  // creates the directory
    ASSERT_TRUE(first.held());
    const auto error = usage_error_of([&] { RunLock second(dir); });
    EXPECT_NE(error.find(dir.string()), std::string::npos) << error;
    EXPECT_NE(error.find("pid " + std::to_string(getpid())), std::string::npos) << error;
    EXPECT_NE(error.find("since "), std::string::npos) << error;
  }
  RunLock again(dir);
  EXPECT_TRUE(again.held());
}

TEST(RunLock, ATrainerOnADirectoryInUseIsRefusedBeforeWritingAnything) {
  const auto dir = fresh_dir("run_lock_trainer");
  const auto config = tiny_config(dir, {"train.max_steps=1"});
  RunLock holder(config.train.output_dir);
  const auto error = usage_error_of([&] { Trainer trainer(config); });
  EXPECT_NE(error.find("in use by another mlm-train"), std::string::npos) << error;
  std::vector<std::string> written;
  for (const auto& entry : std::filesystem::directory_iterator(config.train.output_dir)) {
    written.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(written, std::vector<std::string>{".lock"});
}

}  // namespace
}  // namespace mlm::train

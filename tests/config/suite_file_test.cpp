// A probe suite file (suite_config.h): its tasks resolved against its own directory, its seeds a
// list or a count, and each mistake one line naming the file, the line and the dotted key.
#include <gtest/gtest.h>

#include "config/config_test_util.h"
#include "mlm/config/suite_config.h"
#include "mlm/config/task_config.h"
#include "mlm/util/errors.h"

namespace mlm::config::suite_file {

using testing::TempDir;

// The ConfigError's message and key for the suite file `text` (beside a task file a.yaml).
std::pair<std::string, std::string> suite_error_of(const TempDir& dir, const std::string& text) {
  dir.write("a.yaml", "task: {}\n");
  try {
    load_suite_config(dir.write("suite.yaml", text));
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return {e.what(), e.key()};
  }
  return {"no error", ""};
}

void expect_in(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
}

TEST(SuiteFile, ReadsTasksAgainstItsDirectoryAndSeedsAsAListOrACount) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "sub");
  dir.write("a.yaml", "task: {}\n");
  dir.write("sub/b.yaml", "task: {}\n");
  const auto listed = load_suite_config(dir.write("s.yaml", "suite:\n  name: glue\n  seeds: [7, 3]\n  tasks: [a.yaml, sub/b.yaml]\n"));
  EXPECT_EQ(listed.name, "glue");
  EXPECT_EQ(listed.seeds, (std::vector<int64_t>{7, 3}));
  EXPECT_EQ(listed.tasks, (std::vector<std::string>{(dir.path() / "a.yaml").string(), (dir.path() / "sub/b.yaml").string()}));
  const auto counted = load_suite_config(dir.write("c.yaml", "suite:\n  name: x\n  seeds: 3\n  tasks: [a.yaml]\n"));
  EXPECT_EQ(counted.seeds, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_TRUE(is_suite_file(dir.path() / "c.yaml"));
  EXPECT_FALSE(is_suite_file(dir.path() / "a.yaml"));
  EXPECT_FALSE(is_suite_file(dir.path() / "missing.yaml"));
}

TEST(SuiteFile, EachMistakeIsOneLineNamingTheKey) {
  TempDir dir;
  const std::string ok_tasks = "  tasks: [a.yaml]\n";
  auto [message, key] = suite_error_of(dir, "suite:\n  name: x\n  seed: 3\n" + ok_tasks);
  expect_in(message, {"suite.yaml:3: unknown key 'suite.seed'", "did you mean 'suite.seeds'?"});
  EXPECT_EQ(key, "suite.seed");
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n  seeds: [1, 2, 1]\n" + ok_tasks);
  expect_in(message, {"suite.yaml:3: suite.seeds[2] 1 is given twice"});
  EXPECT_EQ(key, "suite.seeds[2]");
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n  seeds: [1, two]\n" + ok_tasks);
  expect_in(message, {"suite.seeds[1] expected an integer, got 'two'"});
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n  seeds: 0\n" + ok_tasks);
  expect_in(message, {"suite.seeds needs at least one seed"});
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n" + ok_tasks);
  expect_in(message, {"suite.seeds is missing"});
  std::tie(message, key) = suite_error_of(dir, "suite:\n  seeds: 2\n" + ok_tasks);
  expect_in(message, {"suite.name is missing"});
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n  seeds: 2\n  tasks: [a.yaml, nope.yaml]\n");
  expect_in(message, {"suite.yaml:4: suite.tasks[1] names no task file", "nope.yaml"});
  EXPECT_EQ(key, "suite.tasks[1]");
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n  seeds: 2\n  tasks: []\n");
  expect_in(message, {"suite.tasks must be a non-empty list"});
  std::tie(message, key) = suite_error_of(dir, "suite:\n  name: x\n  seeds: 2\n" + ok_tasks + "extra: 1\n");
  expect_in(message, {"expected one section, suite:"});
}

// A task file that loads: two labels, its own recipe.
constexpr const char* kTask =
    "task:\n  name: {}\n  train: t.jsonl\n  validation: v.jsonl\n  labels: [a, b]\n"
    "finetune:\n  epochs: 3\n  learning_rate: 1.0e-4\n  seed: 5\n";

std::string task_named(const std::string& name) {
  std::string text = kTask;
  return text.replace(text.find("{}"), 2, name);
}

TEST(SuiteFile, ItsFinetuneKeysGoOverEveryTasksOwn) {
  TempDir dir;
  dir.write("a.yaml", task_named("a"));
  dir.write("b.yaml", task_named("b"));
  const auto suite = load_suite_config(dir.write(
      "s.yaml", "suite:\n  name: screen\n  seeds: 2\n  tasks: [a.yaml, b.yaml]\n"
                "  finetune: {epochs: 1, max_train_examples: 40}\n"));
  const auto tasks = load_suite_tasks(suite);
  ASSERT_EQ(tasks.size(), 2u);
  for (const auto& task : tasks) {
    EXPECT_EQ(task.finetune.epochs, 1) << task.task.name;              // the suite's
    EXPECT_EQ(task.finetune.max_train_examples, 40) << task.task.name;
    EXPECT_DOUBLE_EQ(task.finetune.learning_rate, 1e-4) << task.task.name;  // the task's own
    EXPECT_EQ(task.finetune.seed, 5) << task.task.name;
  }
  EXPECT_EQ(tasks[1].task.name, "b");
  // Without finetune: each task's recipe as its file gives it.
  const auto plain = load_suite_tasks(load_suite_config(dir.write("p.yaml", "suite:\n  name: p\n  seeds: 1\n  tasks: [a.yaml]\n")));
  EXPECT_EQ(plain.at(0).finetune.epochs, 3);
  EXPECT_EQ(plain.at(0).finetune.max_train_examples, 0);
}

TEST(SuiteFile, ABadFinetuneKeyOrValueNamesTheSuiteFile) {
  TempDir dir;
  dir.write("a.yaml", task_named("a"));
  auto error_of = [&](const std::string& recipe) -> std::pair<std::string, std::string> {
    try {
      load_suite_tasks(load_suite_config(
          dir.write("suite.yaml", "suite:\n  name: x\n  seeds: 1\n  tasks: [a.yaml]\n  finetune:\n" + recipe)));
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return {e.what(), e.key()};
    }
    return {"no error", ""};
  };
  auto [message, key] = error_of("    epoch: 1\n");
  expect_in(message, {"suite.yaml:6: unknown key 'suite.finetune.epoch'", "did you mean 'suite.finetune.epochs'?"});
  EXPECT_EQ(key, "suite.finetune.epoch");
  std::tie(message, key) = error_of("    epochs: 0\n");
  expect_in(message, {"suite.yaml", "suite.finetune.epochs must be at least 1"});
  EXPECT_EQ(key, "suite.finetune.epochs");
  std::tie(message, key) = error_of("    max_train_examples: many\n");
  expect_in(message, {"suite.yaml:6", "suite.finetune.max_train_examples"});
}

}  // namespace mlm::config::suite_file

// A task file is read with the run config's codec (field_codec.h): a misspelt key, section or
// choice gets a "did you mean", a wrong value the same message as in a run config, each one
// line naming the file, the line and the dotted key.
#include <gtest/gtest.h>

#include "config/config_test_util.h"
#include "mlm/config/task_config.h"
#include "mlm/util/errors.h"

namespace mlm::config::task_file_keys {

using testing::TempDir;

const std::string kTask = "task:\n  name: t\n  train: a.jsonl\n  validation: b.jsonl\n  labels: [x, y]\n";

// The ConfigError's message and key for the task file `text`.
std::pair<std::string, std::string> error_of(const TempDir& dir, const std::string& text) {
  try {
    load_task_config(dir.write("task.yaml", text));
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return {e.what(), e.key()};
  }
  return {"no error", ""};
}

void expect_has(const std::string& message, const std::vector<std::string>& parts) {
  for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
}

TEST(TaskFileKeys, AMisspeltKeyIsNamedWithItsNearestKey) {
  TempDir dir;
  const auto [message, key] = error_of(dir, kTask + "finetune:\n  seeds: 7\n");
  expect_has(message, {"task.yaml:7: unknown key 'finetune.seeds'", "did you mean 'finetune.seed'?",
                       "the keys of finetune are epochs,"});
  EXPECT_EQ(key, "finetune.seeds");
}

TEST(TaskFileKeys, AMisspeltSectionIsNamedWithItsNearestSection) {
  TempDir dir;
  const auto [message, key] = error_of(dir, kTask + "fintune:\n  seed: 7\n");
  expect_has(message, {"task.yaml:6: unknown section 'fintune'", "did you mean 'finetune'?",
                       "the sections are task, finetune"});
}

TEST(TaskFileKeys, AMisspeltChoiceIsNamedWithItsNearestChoice) {
  TempDir dir;
  const auto [message, key] = error_of(dir, kTask + "  metric: acuracy\n");
  expect_has(message, {"task.yaml:6: task.metric: expected one of accuracy, macro_f1, matthews, span_f1",
                       "got 'acuracy'", "did you mean 'accuracy'?"});
  EXPECT_EQ(key, "task.metric");
}

TEST(TaskFileKeys, AValueOfTheWrongTypeSaysWhatWasExpected) {
  TempDir dir;
  expect_has(error_of(dir, kTask + "finetune:\n  epochs: three\n").first,
             {"task.yaml:7: finetune.epochs: expected an integer, got 'three'"});
  expect_has(error_of(dir, kTask + "finetune:\n  shuffle: maybe\n").first,
             {"finetune.shuffle: expected true or false, got 'maybe'"});
  expect_has(error_of(dir, kTask + "finetune:\n  learning_rate: [1]\n").first,
             {"finetune.learning_rate: expected a number, got a list"});
}

TEST(TaskFileKeys, AKeySetTwiceIsRefused) {
  TempDir dir;
  const auto [message, key] = error_of(dir, kTask + "  name: u\n");
  expect_has(message, {"task.yaml:6: task.name is set twice (first at line 2)"});
  EXPECT_EQ(key, "task.name");
}

TEST(TaskFileKeys, RegressionAndBinaryF1AreCheckedAgainstTheLabels) {
  TempDir dir;
  const std::string regression =
      "task:\n  name: t\n  kind: regression\n  train: a.jsonl\n  validation: b.jsonl\n  metric: pearson\n";
  const auto config = load_task_config(dir.write("ok.yaml", regression));
  EXPECT_EQ(config.task.kind, TaskKind::regression);
  EXPECT_FALSE(higher_is_better(TaskMetric::mse));
  EXPECT_TRUE(higher_is_better(TaskMetric::spearman));
  expect_has(error_of(dir, regression + "  labels: [x, y]\n").first,
             {"task.labels is not used by a regression task"});
  expect_has(error_of(dir, "task:\n  name: t\n  kind: regression\n  train: a\n  validation: b\n").first,
             {"task.metric cannot score a regression task with accuracy"});
  expect_has(error_of(dir, kTask + "  metric: mse\n").first,
             {"task.metric cannot score a sequence_classification task with mse"});
  const auto binary = load_task_config(dir.write("f1.yaml", kTask + "  metric: binary_f1\n  positive_label: x\n"));
  EXPECT_EQ(binary.task.positive_label, "x");
  expect_has(error_of(dir, kTask + "  metric: binary_f1\n  positive_label: z\n").first,
             {"task.positive_label 'z' is not one of task.labels"});
  expect_has(error_of(dir, kTask + "  positive_label: x\n").first, {"task.positive_label is only used by metric binary_f1"});
  expect_has(
      error_of(dir, "task:\n  name: t\n  train: a\n  validation: b\n  labels: [x, y, z]\n  metric: binary_f1\n").first,
      {"binary_f1 needs exactly two labels, task.labels has 3"});
}

TEST(TaskFileKeys, EveryKeyReads) {
  TempDir dir;
  const auto config = load_task_config(dir.write(
      "ok.yaml", kTask + "  kind: token_classification\n  metric: span_f1\n  test: c.jsonl\n  text_field: t\n"
                         "  text_pair_field: p\n  label_field: l\n  tokens_field: w\n  max_seq_len: 64\n"
                         "finetune:\n  epochs: 2\n  learning_rate: 1e-4\n  batch_size: 8\n  warmup_ratio: 0.2\n"
                         "  weight_decay: 0\n  early_stopping_patience: 0\n  seed: 7\n  shuffle: false\n"
                         "  dropout: false\n  max_steps: 5\n  max_train_examples: 9\n  max_grad_norm: 0.5\n"));
  const auto& t = config.task;
  EXPECT_EQ(t.kind, TaskKind::token_classification);
  EXPECT_EQ(t.metric, TaskMetric::span_f1);
  EXPECT_EQ(t.labels, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(t.test + t.text_field + t.text_pair_field + t.label_field + t.tokens_field, "c.jsonltplw");
  EXPECT_EQ(t.max_seq_len, 64);
  const auto& f = config.finetune;
  EXPECT_EQ(f.epochs, 2);
  EXPECT_EQ(f.learning_rate, 1e-4);
  EXPECT_EQ(f.batch_size, 8);
  EXPECT_EQ(f.warmup_ratio, 0.2);
  EXPECT_EQ(f.weight_decay, 0.0);
  EXPECT_EQ(f.early_stopping_patience, 0);
  EXPECT_EQ(f.seed, 7);
  EXPECT_FALSE(f.shuffle);
  EXPECT_FALSE(f.dropout);
  EXPECT_EQ(f.max_steps, 5);
  EXPECT_EQ(f.max_train_examples, 9);
  EXPECT_EQ(f.max_grad_norm, 0.5);
}

}  // namespace mlm::config::task_file_keys

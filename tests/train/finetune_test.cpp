// The fine-tuning pieces on their own: the metrics against values worked by hand (and as
// scikit-learn / seqeval define them), the Trainer's learning-rate schedule, the task file's
// checks, and a run that learns a task it can learn and leaves the default generator as it was.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/train/finetune/finetune.h"
#include "mlm/util/errors.h"

namespace mlm::train::finetune {
namespace {

using config::testing::TempDir;

TEST(FinetuneMetrics, AccuracyMacroF1AndMatthewsAsScikitLearn) {
  const std::vector<int64_t> gold = {0, 0, 1, 1, 2, 2}, pred = {0, 1, 1, 1, 2, 0};
  EXPECT_DOUBLE_EQ(accuracy(gold, pred), 4.0 / 6.0);
  // Per class F1: 0: tp 1 fp 1 fn 1 -> 0.5; 1: tp 2 fp 1 fn 0 -> 0.8; 2: tp 1 fp 0 fn 1 -> 2/3.
  EXPECT_NEAR(macro_f1(gold, pred), (0.5 + 0.8 + 2.0 / 3.0) / 3.0, 1e-12);
  // A label only predicted still counts (scikit-learn: labels of gold and prediction).
  EXPECT_NEAR(macro_f1({0, 0}, {0, 3}), (2.0 / 3.0 + 0.0) / 2.0, 1e-12);
  // Gorodkin's R_K: c=4, n=6, t=(2,2,2), p=(2,3,1): (4*6 - 12) / sqrt((36 - 12) * (36 - 14)).
  EXPECT_NEAR(matthews(gold, pred), 12.0 / std::sqrt(24.0 * 22.0), 1e-12);
  EXPECT_DOUBLE_EQ(matthews({0, 1, 0, 1}, {0, 1, 0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(matthews({0, 0, 0}, {0, 0, 0}), 0.0) << "one class only: undefined, 0 as scikit-learn";
}

TEST(FinetuneMetrics, SpansAsSeqevalsDefaultMode) {
  const auto spans = bio_spans({"B-PER", "I-PER", "O", "I-LOC", "I-LOC", "B-LOC", "I-PER", "B-ORG"});
  ASSERT_EQ(spans.size(), 5u);
  EXPECT_EQ(spans[0].type, "PER");
  EXPECT_EQ(spans[0].last, 1);
  EXPECT_EQ(spans[1].type, "LOC");  // I- after O opens a span
  EXPECT_EQ(spans[1].first, 3);
  EXPECT_EQ(spans[1].last, 4);
  EXPECT_EQ(spans[2].first, 5);  // B- closes the previous one
  EXPECT_EQ(spans[3].type, "PER");  // I- of another type opens one
  EXPECT_EQ(spans[4].last, 7);      // the sequence's end closes the last
  // 2 gold spans, 2 predicted, 1 the same: P = R = 0.5.
  EXPECT_DOUBLE_EQ(span_f1({{"B-A", "I-A", "O", "B-B"}}, {{"B-A", "I-A", "O", "B-A"}}), 0.5);
  EXPECT_DOUBLE_EQ(span_f1({{"O", "O"}}, {{"O", "O"}}), 0.0);
}

TEST(FinetuneSchedule, LinearWarmupThenLinearDecayAsTransformers) {
  // total 10, warmup 2: 0, 0.5, then (10 - s) / 8.
  EXPECT_DOUBLE_EQ(linear_warmup_decay(1.0, 0, 2, 10), 0.0);
  EXPECT_DOUBLE_EQ(linear_warmup_decay(1.0, 1, 2, 10), 0.5);
  EXPECT_DOUBLE_EQ(linear_warmup_decay(1.0, 2, 2, 10), 1.0);
  EXPECT_DOUBLE_EQ(linear_warmup_decay(1.0, 6, 2, 10), 0.5);
  EXPECT_DOUBLE_EQ(linear_warmup_decay(1.0, 10, 2, 10), 0.0);
  EXPECT_DOUBLE_EQ(linear_warmup_decay(2.0, 0, 0, 4), 2.0) << "no warmup starts at the peak";
}

std::string write(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = (dir.path() / name).string();
  std::ofstream(path) << text;
  return path;
}

const std::string kTask =
    "task:\n  name: t\n  kind: sequence_classification\n  train: a.jsonl\n  validation: b.jsonl\n"
    "  labels: [x, y]\n  metric: matthews\nfinetune:\n  epochs: 2\n  shuffle: false\n";

TEST(FinetuneTaskFile, ReadsEveryKeyAndRefusesWhatItCannotUse) {
  TempDir dir;
  const auto c = config::load_task_config(write(dir, "ok.yaml", kTask));
  EXPECT_EQ(c.task.metric, config::TaskMetric::matthews);
  EXPECT_EQ(c.finetune.epochs, 2);
  EXPECT_FALSE(c.finetune.shuffle);
  EXPECT_EQ(c.finetune.batch_size, 32);  // defaults for what the file leaves out

  auto error_of = [&](const std::string& text) {
    try {
      config::load_task_config(write(dir, "bad.yaml", text));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(kTask + "  warmup: 3\n").find("bad.yaml:11: unknown key 'finetune.warmup'"), std::string::npos);
  EXPECT_NE(error_of(kTask + "  batch_size: [1]\n").find("finetune.batch_size: expected an integer, got a list"),
            std::string::npos);
  EXPECT_NE(error_of(kTask + "  epochs: 3\n").find("finetune.epochs is set twice"), std::string::npos);
  EXPECT_NE(error_of("task:\n  name: t\n  metric: f1\n").find("expected one of accuracy"), std::string::npos);
  EXPECT_NE(error_of("task:\n  name: t\n  train: a\n  validation: b\n  labels: [x]\n").find("task.labels"),
            std::string::npos);
  EXPECT_NE(error_of("model:\n  x: 1\n").find("unknown section 'model'"), std::string::npos);
  EXPECT_NE(error_of("task: [\n").find("not YAML"), std::string::npos);
}

// A task a tiny encoder learns in a few epochs: is token 7 in the text?
TEST(Finetune, LearnsALearnableTaskAndLeavesTheGeneratorAlone) {
  config::ModelConfig mc;
  mc.hidden_size = 32;
  mc.num_hidden_layers = 1;
  mc.num_attention_heads = 2;
  mc.intermediate_size = 64;
  mc.max_position_embeddings = 16;
  torch::manual_seed(1);
  Classifier classifier(model::make_masked_lm(mc, 20, 0), config::TaskKind::sequence_classification, 2);

  TaskSplits splits;
  auto examples = [](int64_t n, uint64_t seed) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    EncodedSplit split;
    for (int64_t i = 0; i < n; ++i) {
      const auto body = torch::randint(8, 20, {6}, gen, torch::kLong);
      EncodedExample e;
      e.ids = {2};
      for (int64_t k = 0; k < 6; ++k) e.ids.push_back(body[k].item<int64_t>());
      const bool yes = i % 2 == 0;
      if (yes) e.ids[1 + static_cast<size_t>(i % 6)] = 7;
      e.ids.push_back(3);
      e.token_types.assign(e.ids.size(), 0);
      e.labels = {yes ? 1 : 0};
      split.examples.push_back(e);
    }
    return split;
  };
  splits.train = examples(128, 1);
  splits.validation = examples(64, 2);
  splits.test = examples(64, 3);
  config::TaskConfig task;
  task.task.name = "has7";
  task.task.labels = {"no", "yes"};
  task.finetune.epochs = 8;
  task.finetune.learning_rate = 3e-3;
  task.finetune.batch_size = 16;
  task.finetune.early_stopping_patience = 0;

  torch::manual_seed(99);
  const auto before = torch::rand({4});
  torch::manual_seed(99);
  const auto result = run_finetune(classifier, task, splits, 0, torch::kCPU);
  EXPECT_TRUE(torch::equal(torch::rand({4}), before)) << "the default generator was restored";

  EXPECT_EQ(result.steps, 8 * 8);
  EXPECT_EQ(result.evaluations.size(), 8u);
  ASSERT_TRUE(result.test.has_value());
  EXPECT_GT(result.test->value, 0.9) << "accuracy on the test split";
  EXPECT_LT(result.losses.back(), result.losses.front());
  // The best epoch's weights are the ones scored on test, and are left in the classifier.
  const auto again = evaluate_split(classifier, task.task, splits.validation, 16, 0, torch::kCPU);
  EXPECT_DOUBLE_EQ(again.value, result.best_validation);
}

}  // namespace
}  // namespace mlm::train::finetune

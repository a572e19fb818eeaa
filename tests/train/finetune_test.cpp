// The fine-tuning pieces on their own: the metrics against values worked by hand (and as
// scikit-learn / seqeval define them), the Trainer's learning-rate schedule, the task file's
// checks, and a run that learns a task it can learn and leaves the default generator as it was.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "config/config_test_util.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/train/finetune/finetune.h"
#include "mlm/train/finetune/probes.h"
#include "mlm/train/finetune/seed_spread.h"
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

TEST(FinetuneMetrics, BinaryF1OfThePositiveLabel) {
  const std::vector<int64_t> gold = {1, 1, 1, 0, 0, 0}, pred = {1, 1, 0, 1, 0, 0};
  // Label 1: tp 2, fp 1, fn 1 -> 2*2 / (4 + 1 + 1); label 0: tp 2, fp 1, fn 1 too.
  EXPECT_NEAR(binary_f1(gold, pred, 1), 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(binary_f1({1, 0, 0, 0}, {1, 1, 0, 0}, 1), 2.0 / 3.0, 1e-12);  // tp 1, fp 1, fn 0
  EXPECT_NEAR(binary_f1({1, 0, 0, 0}, {1, 1, 0, 0}, 0), 4.0 / 5.0, 1e-12);  // tp 2, fp 0, fn 1
  EXPECT_DOUBLE_EQ(binary_f1({0, 0}, {0, 0}, 1), 0.0) << "never gold nor predicted: 0 as scikit-learn";
}

TEST(FinetuneMetrics, MseAndPearsonAndSpearmanWithTiesAsScipy) {
  const std::vector<double> x = {1, 2, 3, 4, 5}, y = {2, 1, 4, 3, 5};
  EXPECT_DOUBLE_EQ(mean_squared_error(x, y), 4.0 / 5.0);
  // Centred: (-2, -1, 0, 1, 2) and (-1, -2, 1, 0, 2); products sum to 8, squares to 10 and 10.
  EXPECT_NEAR(pearson(x, y), 0.8, 1e-12);
  EXPECT_NEAR(spearman(x, y), 0.8, 1e-12) << "ranks are the values";
  // Ties get the average of their ranks (scipy.stats.rankdata, method "average").
  EXPECT_EQ(average_ranks({10, 20, 20, 5, 20}), (std::vector<double>{2, 4, 4, 1, 4}));
  // scipy.stats.spearmanr([1, 2, 2, 3], [1, 3, 2, 4]): ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4):
  // centred (-1.5, 0, 0, 1.5) and (-1.5, .5, -.5, 1.5): 4.5 / sqrt(4.5 * 5) = 0.9486832980505138.
  EXPECT_NEAR(spearman({1, 2, 2, 3}, {1, 3, 2, 4}), 0.9486832980505138, 1e-12);
  // Spearman sees order only: a monotone map of one side keeps rho at 1, not Pearson's r.
  EXPECT_NEAR(spearman({1, 2, 3, 4}, {1, 8, 27, 64}), 1.0, 1e-12);
  EXPECT_LT(pearson({1, 2, 3, 4}, {1, 8, 27, 64}), 0.99);
  EXPECT_DOUBLE_EQ(pearson({1, 1, 1}, {1, 2, 3}), 0.0) << "a constant side: undefined, 0";
}

TEST(FinetuneMetrics, SeedSpreadIsTheMeanAndTheSampleStandardDeviation) {
  const auto s = spread_of({0.5, 0.7, 0.9});
  EXPECT_NEAR(s.mean, 0.7, 1e-12);
  EXPECT_NEAR(s.std, 0.2, 1e-12) << "n - 1: sqrt((0.04 + 0 + 0.04) / 2)";
  EXPECT_EQ(spread_of({0.3}).std, 0.0);
}

TEST(FinetuneMetrics, ASuitesAverageSpreadsOverTheSeedsOfItsPerSeedMeans) {
  // Two tasks over three seeds: the seeds' averages are 0.4, 0.4, 0.7.
  const auto per_seed = mean_over_tasks({{0.2, 0.4, 0.6}, {0.6, 0.4, 0.8}});
  ASSERT_EQ(per_seed.size(), 3u);
  EXPECT_NEAR(per_seed[2], 0.7, 1e-12);
  const auto s = spread_of(per_seed);
  EXPECT_NEAR(s.mean, 0.5, 1e-12) << "the mean of the tasks' means, 0.4 and 0.6";
  EXPECT_NEAR(s.std, std::sqrt(0.03), 1e-12) << "sqrt((0.01 + 0.01 + 0.04) / 2), not the tasks' 0.2 each";
  EXPECT_TRUE(mean_over_tasks({}).empty());
  EXPECT_THROW(mean_over_tasks({{0.1, 0.2}, {0.3}}), std::logic_error);

  const auto with_tests = suite_average({{0.2, 0.4, 0.6}, {0.6, 0.4, 0.8}}, {{0.6, 0.4, 0.8}, {0.2, 0.4, 0.6}});
  EXPECT_EQ(with_tests.tasks, 2);
  EXPECT_NEAR(with_tests.validation.std, std::sqrt(0.03), 1e-12);
  ASSERT_TRUE(with_tests.test.has_value());
  EXPECT_NEAR(with_tests.test->mean, 0.5, 1e-12);
  EXPECT_EQ(with_tests.test_per_seed, with_tests.validation_per_seed);
  const auto one_test = suite_average({{0.2, 0.4, 0.6}, {0.6, 0.4, 0.8}}, {{0.1, 0.1, 0.1}});
  EXPECT_FALSE(one_test.test.has_value()) << "one of the two tasks has a test split: no test average";
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

// One intra-op thread while it lives: the tiny models below have no work to share, and on a
// busy machine the idle threads' spinning made a 2 s test take 100 s.
class OneTorchThread {
 public:
  OneTorchThread() : before_(torch::get_num_threads()) { torch::set_num_threads(1); }
  ~OneTorchThread() { torch::set_num_threads(before_); }

 private:
  int before_;
};

config::ModelConfig tiny_finetune_model_config() {
  config::ModelConfig mc;
  mc.hidden_size = 32;
  mc.num_hidden_layers = 1;
  mc.num_attention_heads = 2;
  mc.intermediate_size = 64;
  mc.max_position_embeddings = 16;
  return mc;
}

// `n` examples [CLS] + 6 tokens of 8..19 + [SEP] with token 7 put in `sevens(i)` places (from
// position 1 + i % 6 on); labelled by `label(i)` (sequence tasks) or with the target
// `sevens(i)` (regression).
EncodedSplit sevens_split(int64_t n, uint64_t seed, const std::function<int64_t(int64_t)>& sevens, bool regression) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  EncodedSplit split;
  for (int64_t i = 0; i < n; ++i) {
    const auto body = torch::randint(8, 20, {6}, gen, torch::kLong);
    EncodedExample e;
    e.ids = {2};
    for (int64_t k = 0; k < 6; ++k) e.ids.push_back(body[k].item<int64_t>());
    for (int64_t k = 0; k < sevens(i); ++k) e.ids[1 + static_cast<size_t>((i + k) % 6)] = 7;
    e.ids.push_back(3);
    e.token_types.assign(e.ids.size(), 0);
    if (regression) {
      e.target = static_cast<double>(sevens(i));
    } else {
      e.labels = {sevens(i) > 0 ? 1 : 0};
    }
    split.examples.push_back(e);
  }
  return split;
}

// Is token 7 in the text? Half the examples have it once.
TaskSplits has7_splits() {
  const auto once_every_other = [](int64_t i) { return i % 2 == 0 ? int64_t(1) : int64_t(0); };
  TaskSplits splits;
  splits.train = sevens_split(128, 1, once_every_other, false);
  splits.validation = sevens_split(64, 2, once_every_other, false);
  splits.test = sevens_split(64, 3, once_every_other, false);
  return splits;
}

// A task a tiny encoder learns in a few epochs: is token 7 in the text?
TEST(Finetune, LearnsALearnableTaskAndLeavesTheGeneratorAlone) {
  torch::manual_seed(1);
  Classifier classifier(model::make_masked_lm(tiny_finetune_model_config(), 20, 0),
                        config::TaskKind::sequence_classification, 2);
  const auto splits = has7_splits();
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

// Regression (transformers' problem_type "regression": one output, mean squared error): the
// number of 7s in the text, 0 or 1 (ties for Spearman's ranks).
TEST(Finetune, LearnsARegressionTaskWithOneOutput) {
  const OneTorchThread one_thread;
  torch::manual_seed(1);
  Classifier classifier(model::make_masked_lm(tiny_finetune_model_config(), 20, 0), config::TaskKind::regression, 1);
  const auto count = [](int64_t i) { return i % 2; };
  TaskSplits splits;
  splits.train = sevens_split(128, 1, count, true);
  splits.validation = sevens_split(64, 2, count, true);
  splits.test = sevens_split(64, 3, count, true);
  config::TaskConfig task;
  task.task.name = "count7";
  task.task.kind = config::TaskKind::regression;
  task.task.metric = config::TaskMetric::mse;
  task.finetune.epochs = 8;
  task.finetune.learning_rate = 3e-3;
  task.finetune.batch_size = 16;
  task.finetune.early_stopping_patience = 0;
  const auto result = run_finetune(classifier, task, splits, 0, torch::kCPU);
  ASSERT_TRUE(result.test.has_value());
  // Predicting the mean (0.5) everywhere has mse 0.25.
  EXPECT_LT(result.test->value, 0.1) << "mse on the test split";
  EXPECT_EQ(result.test->all.size(), 3u);
  EXPECT_GT(result.test->all[1].second, 0.8) << "pearson";
  EXPECT_GT(result.test->all[2].second, 0.8) << "spearman";
  // mse: lower is better, so the best epoch is the lowest validation mse.
  double lowest = 1e9;
  for (const auto& e : result.evaluations) lowest = std::min(lowest, e.validation.value);
  EXPECT_DOUBLE_EQ(result.best_validation, lowest);
}

// Probes fine-tune in bf16 where the run trains in bf16: their scores must stay within the seed
// spread of fp32's. The bound: the means over 6 seeds differ by at most kBf16SpreadK = 3 fp32
// seed standard deviations (the difference of two such means has a standard error of ~0.6 std:
// 3 is ~5 standard errors, not a flaky bound). The task is scored by Matthews' correlation,
// whose chance level is 0: with 64 training examples fp32 reaches 0.8-1 (std ~0.08), so a bf16
// path that does not learn (0) is far outside the bound. On a CPU without AVX512-BF16 bf16
// takes a slow scalar path: the model is tiny (the test takes seconds).
constexpr double kBf16SpreadK = 3.0;

TEST(FinetuneBf16, ScoresStayWithinTheSeedSpreadOfFp32) {
  const OneTorchThread one_thread;
  torch::manual_seed(1);
  const auto encoder = model::make_masked_lm(tiny_finetune_model_config(), 20, 0);
  auto splits = has7_splits();
  splits.train.examples.resize(64);  // few enough that the seeds do not all reach the same score
  config::TaskConfig task;
  task.task.name = "has7";
  task.task.labels = {"no", "yes"};
  task.task.metric = config::TaskMetric::matthews;
  task.finetune.epochs = 8;
  task.finetune.learning_rate = 3e-3;
  task.finetune.batch_size = 8;
  task.finetune.early_stopping_patience = 0;
  const std::vector<int64_t> seeds = {1, 2, 3, 4, 5, 6};
  const auto fp32 = finetune_over_seeds(encoder, task, splits, seeds, 0, torch::kCPU, torch::kFloat32);
  const auto bf16 = finetune_over_seeds(encoder, task, splits, seeds, 0, torch::kCPU, torch::kBFloat16);
  const auto f = spread_of(fp32.test), b = spread_of(bf16.test);
  EXPECT_GT(f.std, 0.0) << "the seeds must spread for the bound to mean anything";
  EXPECT_LE(std::abs(b.mean - f.mean), kBf16SpreadK * f.std)
      << "fp32 " << f.mean << " ± " << f.std << ", bf16 " << b.mean << " ± " << b.std;
  EXPECT_GT(b.mean, 0.5) << "bf16 learns the task (Matthews' correlation; chance is 0)";
  // bf16 ran: the first step's loss is not fp32's to the last bit.
  auto one_step = task;
  one_step.finetune.max_steps = 1;
  const auto first_loss = [&](torch::Dtype dtype) {
    auto classifier = make_classifier(copy_model(encoder, torch::kCPU), one_step);
    return run_finetune(classifier, one_step, splits, 0, torch::kCPU, dtype).losses.front();
  };
  EXPECT_NE(first_loss(torch::kFloat32), first_loss(torch::kBFloat16));
}

}  // namespace
}  // namespace mlm::train::finetune

// The collapse signs: a discriminator calling one class for kOneClassWindows logged windows past
// warm-up, a masked LM at the unigram baseline past warm-up; each warned once, naming the
// metric, and reported by mlm-eval.
#include <gtest/gtest.h>

#include "mlm/train/loop/collapse_watch.h"

namespace mlm::train::collapse_watch_test {

RtdCounts called_replaced(double predicted) {
  RtdCounts c;
  c.predicted = predicted;
  c.replaced = 150;
  c.true_positives = std::min(predicted, 150.0);
  return c;
}

EvalResult eval(double accuracy, double unigram) {
  EvalResult r;
  r.num_masked = 10000;
  r.mlm_correct = static_cast<int64_t>(accuracy * 10000);
  r.unigram_correct = static_cast<int64_t>(unigram * 10000);
  return r;
}

TEST(CollapseWatch, OneClassIsNothingOrEverythingCalledReplaced) {
  EXPECT_EQ(one_class(called_replaced(0), 1000), "original");
  EXPECT_EQ(one_class(called_replaced(1000), 1000), "replaced");
  EXPECT_EQ(one_class(called_replaced(1), 1000), std::nullopt);
  EXPECT_EQ(one_class(called_replaced(999), 1000), std::nullopt);
  EXPECT_EQ(one_class(called_replaced(0), 0), std::nullopt) << "nothing scored: no sign";
}

TEST(CollapseWatch, WarnsOnceAfterConsecutiveOneClassWindowsPastWarmup) {
  CollapseWatch watch(/*warmup_steps=*/50);
  int64_t step = 0;
  // During warm-up a discriminator calling everything original is no sign yet.
  for (; step <= 50; step += 10) EXPECT_EQ(watch.window(called_replaced(0), 1000, step), std::nullopt);
  for (int64_t i = 1; i < kOneClassWindows; ++i, step += 10) {
    EXPECT_EQ(watch.window(called_replaced(0), 1000, step), std::nullopt) << step;
  }
  // A window that calls both classes starts the count again.
  EXPECT_EQ(watch.window(called_replaced(40), 1000, step), std::nullopt);
  step += 10;
  for (int64_t i = 1; i < kOneClassWindows; ++i, step += 10) {
    EXPECT_EQ(watch.window(called_replaced(0), 1000, step), std::nullopt) << step;
  }
  const auto warning = watch.window(called_replaced(0), 1000, step);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("every token original"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("rtd_f1 0"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("to step " + std::to_string(step)), std::string::npos) << *warning;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(watch.window(called_replaced(0), 1000, step += 10), std::nullopt);
}

TEST(CollapseWatch, WarnsOnceWhenMaskedAccuracySitsAtTheUnigramBaselinePastWarmup) {
  CollapseWatch watch(/*warmup_steps=*/100);
  EXPECT_EQ(watch.evaluated(eval(0.05, 0.05), 100), std::nullopt) << "still warming up";
  EXPECT_EQ(watch.evaluated(eval(0.13, 0.05), 150), std::nullopt) << "learning";
  const auto warning = watch.evaluated(eval(0.055, 0.05), 300);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("eval_mlm_accuracy 0.0550"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("eval_unigram_accuracy 0.0500"), std::string::npos) << *warning;
  EXPECT_EQ(watch.evaluated(eval(0.05, 0.05), 450), std::nullopt) << "once";
}

TEST(CollapseWatch, AnEvaluationOfACollapsedDiscriminatorWarnsAndMlmEvalReportsIt) {
  auto result = eval(0.2, 0.05);
  result.rtd = true;
  result.tokens = 5000;
  result.rtd_counts = called_replaced(0);
  CollapseWatch watch(/*warmup_steps=*/10);
  const auto warning = watch.evaluated(result, 150);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("validation set at step 150"), std::string::npos) << *warning;
  const auto report = collapse_report(result);
  EXPECT_EQ(report["collapse_rtd_one_class"], "original");
  EXPECT_EQ(report["collapse_mlm_at_unigram_baseline"], false);
  result.rtd_counts = called_replaced(300);
  EXPECT_TRUE(collapse_report(result)["collapse_rtd_one_class"].is_null());
  EXPECT_EQ(collapse_report(eval(0.05, 0.05))["collapse_mlm_at_unigram_baseline"], true);
  EXPECT_FALSE(collapse_report(eval(0.05, 0.05)).contains("collapse_rtd_one_class"));
}

}  // namespace mlm::train::collapse_watch_test

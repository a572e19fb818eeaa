// The trainer reads its validation batches once per run: evaluating twice scores the same
// numbers, the second time without the corpus file, and those numbers are the ones the
// read-every-time evaluation (mlm-eval's) gives for the same model.
#include <gtest/gtest.h>

#include "mlm/train/loop/evaluator.h"
#include "mlm/train/run/trainer.h"
#include "train_test_util.h"

// Named, not anonymous: the unity build compiles the trainer tests together.
namespace mlm::train::validation_once {

using namespace mlm::train::testing;

void expect_same_eval(const EvalResult& a, const EvalResult& b) {
  EXPECT_EQ(a.num_masked, b.num_masked);
  EXPECT_EQ(a.mlm_correct, b.mlm_correct);
  EXPECT_EQ(a.unigram_correct, b.unigram_correct);
  EXPECT_EQ(a.mlm_loss_sum, b.mlm_loss_sum);  // the same batches in the same order: bit-equal
  EXPECT_EQ(a.num_sentence_pairs, b.num_sentence_pairs);
  EXPECT_EQ(a.nsp_correct, b.nsp_correct);
  EXPECT_EQ(a.nsp_loss_sum, b.nsp_loss_sum);
  EXPECT_EQ(a.sequences, b.sequences);
  EXPECT_EQ(a.batches, b.batches);
}

TEST(ValidationOnce, EvaluationsReuseTheBatchesReadAtTheFirst) {
  const auto dir = fresh_dir("validation_once");
  const auto valid = dir / "valid_copy.txt";
  fs::copy_file(std::string(MLM_FIXTURES_DIR) + "/corpus/valid.txt", valid);
  auto config = tiny_config(dir / "run", {"model.objective=sop", "train.max_steps=1",
                                          "eval.every_steps=0", "eval.max_batches=3",
                                          "checkpoint.every_steps=0"});
  config.data.valid_files = {valid.string()};
  Trainer trainer(config);
  const auto first = trainer.evaluate_and_log();
  ASSERT_GT(first.num_masked, 0);
  ASSERT_EQ(first.batches, 3);

  // The read-every-time path gives the same numbers for the same model.
  const auto tokenizer = text::Tokenizer::load(config.tokenizer.model);
  const auto comm = dist::Communicator::single_process();
  expect_same_eval(
      evaluate(trainer.model(), config, tokenizer, *comm, trainer.device(), trainer.compute_dtype()), first);

  fs::remove(valid);  // no file to read any more: the second evaluation does not need one
  const auto second = trainer.evaluate_and_log();
  expect_same_eval(second, first);
  EXPECT_THROW(
      evaluate(trainer.model(), config, tokenizer, *comm, trainer.device(), trainer.compute_dtype()),
      std::exception);
}

}  // namespace mlm::train::validation_once

// The trainer with model.attend_across_documents: false on the fixture corpus (several short
// documents per 128-token sequence): the batches carry document ids, the mask changes the
// loss, the loss falls, and a run stopped by SIGTERM and resumed from its checkpoint gives the
// uninterrupted run's losses, gradient norms and weights bit for bit.
#include "mlm/train/run/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "mlm/masking/batch_stream.h"
#include "recorded_run.h"

// A named namespace: the unity build compiles this file with the other trainer tests.
namespace mlm::train::document_mask {

using namespace mlm::train::testing;
using config::resolve_data_plan;

std::vector<std::string> settings(bool attend_across, int64_t steps) {
  // 128-token sequences: the fixture's documents (about 60 tokens) often share one.
  return {std::string("model.attend_across_documents=") + (attend_across ? "true" : "false"), "data.seq_len=128",
          "train.max_steps=" + std::to_string(steps), "checkpoint.every_steps=0", "eval.every_steps=0",
          "eval.max_batches=2"};
}

TEST(TrainerDocumentMask, TrainsAndResumesBitExactly) {
  const auto sets = settings(false, 8);
  const auto straight_dir = fresh_dir("document_mask_straight");
  const auto config = tiny_config(straight_dir, sets);
  const auto straight = run_trainer(config);
  ASSERT_EQ(straight.exit_code, 0);
  ASSERT_EQ(straight.steps.size(), 8u);
  for (const auto& s : straight.steps) {
    EXPECT_FALSE(s.skipped) << "step " << s.step;
    EXPECT_TRUE(std::isfinite(s.loss) && std::isfinite(s.grad_norm)) << "step " << s.step;
  }
  // Falling: the last three steps against the first three (single steps are noisy).
  const auto& st = straight.steps;
  EXPECT_LT(st[5].loss + st[6].loss + st[7].loss, st[0].loss + st[1].loss + st[2].loss);

  // The trainer's batches hold rows of two documents or more, with their ids.
  {
    const auto tokenizer = text::Tokenizer::load(config.tokenizer.model);
    masking::BatchStream stream(resolve_data_plan(config), tokenizer, data::Split::train);
    const auto batch = stream.next();
    ASSERT_TRUE(batch);
    ASSERT_EQ(batch->document_ids.size(), batch->input_ids.size());
    int64_t joined_rows = 0;
    for (int64_t r = 0; r < batch->batch_size; ++r) {
      const auto row = batch->document_ids.begin() + r * batch->seq_len;
      joined_rows += *std::max_element(row, row + batch->seq_len) >= 2;
    }
    EXPECT_GE(joined_rows, batch->batch_size / 2) << joined_rows << " of " << batch->batch_size;
  }
  // The same first batch attending across documents: another loss, so the mask reached it.
  const auto across = run_trainer(tiny_config(fresh_dir("document_mask_across"), settings(true, 3)));
  ASSERT_EQ(across.exit_code, 0);
  EXPECT_EQ(across.steps[0].num_masked, st[0].num_masked);
  EXPECT_NE(across.steps[0].loss, st[0].loss);

  expect_stop_and_resume_equal(tiny_config(fresh_dir("document_mask_split"), sets), 4, straight);
}

}  // namespace mlm::train::document_mask

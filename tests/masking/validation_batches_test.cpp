// The validation batches are read and tokenized once: they equal what BatchStream(valid)
// draws (so evaluation numbers are unchanged), stay the same at every call, and need no
// corpus file after construction.
#include <gtest/gtest.h>

#include <filesystem>

#include "mlm/config/run_config.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/masking/validation_batches.h"
#include "text/tokenizer_fixture.h"

namespace mlm::masking::validation_batches_test {  // named: the tests share one unity build

using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using config::resolve_data_plan;

void expect_same_batch(const MaskedBatch& a, const MaskedBatch& b) {
  EXPECT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.seq_len, b.seq_len);
  EXPECT_EQ(a.input_ids, b.input_ids);
  EXPECT_EQ(a.token_type_ids, b.token_type_ids);
  EXPECT_EQ(a.attention_mask, b.attention_mask);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.masked_positions, b.masked_positions);
  EXPECT_EQ(a.nsp_labels, b.nsp_labels);
}

config::RunConfig valid_config(const std::string& valid_file) {
  config::RunConfig c;
  c.data.train_files = {corpus_path("train.txt")};
  c.data.valid_files = {valid_file, corpus_path("docs.jsonl.gz")};
  c.data.seq_len = 40;
  c.train.micro_batch_size = 3;
  c.eval.batch_size = 5;
  c.eval.seed = 17;
  return c;
}

TEST(ValidationBatches, EqualTheValidBatchStreamOnEveryRank) {
  const auto& tok = fixture_tokenizer();
  for (auto objective : {config::Objective::mlm, config::Objective::sop}) {
    for (int64_t max_batches : {int64_t{0}, int64_t{5}}) {
      for (int world : {1, 2}) {
        for (int rank = 0; rank < world; ++rank) {
          SCOPED_TRACE(std::string(config::to_string(objective)) + " max_batches " +
                       std::to_string(max_batches) + " rank " + std::to_string(rank) + " of " +
                       std::to_string(world));
          auto c = valid_config(corpus_path("valid.txt"));
          c.model.objective = objective;
          c.eval.max_batches = max_batches;
          const ValidationBatches kept(resolve_data_plan(c, rank, world), tok);
          BatchStream stream(resolve_data_plan(c, rank, world), tok, data::Split::valid);
          const int64_t share = max_batches > 0 ? (max_batches + world - 1) / world : INT64_MAX;
          int64_t i = 0;
          for (; i < share; ++i) {
            const auto want = stream.next();
            if (!want) break;
            ASSERT_LT(i, kept.size());
            expect_same_batch(kept.batch(i), *want);
          }
          EXPECT_EQ(kept.size(), i);
          if (max_batches == 0) EXPECT_GT(kept.size(), 3);
        }
      }
    }
  }
}

TEST(ValidationBatches, AreReadOnceAndMaskedTheSameEveryTime) {
  const auto& tok = fixture_tokenizer();
  const auto dir = mlm::testing::make_temp_dir("validation_once");
  const auto copy = dir / "valid.txt";
  std::filesystem::copy_file(corpus_path("valid.txt"), copy);
  const auto c = valid_config(copy.string());
  const ValidationBatches kept(resolve_data_plan(c), tok);
  std::vector<MaskedBatch> first;
  for (int64_t i = 0; i < kept.size(); ++i) first.push_back(kept.batch(i));
  // Without the file, the batches are still there, identical.
  std::filesystem::remove_all(dir);
  ASSERT_GT(kept.size(), 3);
  for (int64_t i = 0; i < kept.size(); ++i) expect_same_batch(kept.batch(i), first[static_cast<size_t>(i)]);
  EXPECT_EQ(kept.sequences(), (kept.size() - 1) * 5 + kept.batch(kept.size() - 1).batch_size);
  // A stream, by contrast, reads the corpus every time: it fails now.
  EXPECT_ANY_THROW({ BatchStream stream(resolve_data_plan(c), tok, data::Split::valid); });
}

}  // namespace mlm::masking::validation_batches_test

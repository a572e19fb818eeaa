// The trainer end to end with the options the other trainer tests leave at their defaults:
// the sentence-pair objectives (nsp, sop), pre-LN (model.norm: pre) and word-level masking
// (whole_word, span). The batches the trainer draws are drawn again here (BatchStream, the
// trainer's own source) and checked against the trainer's step statistics and against the
// word boundaries the tokenizer's pieces give.
#include "mlm/train/run/trainer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mlm/masking/batch_stream.h"
#include "mlm/util/errors.h"
#include "recorded_run.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// trainer_test.cpp, whose anonymous-namespace helpers have the same names.
namespace mlm::train::objectives {

using namespace mlm::train::testing;
using config::resolve_data_plan;

std::vector<std::string> settings(const std::string& objective, const std::string& norm,
                                  const std::string& strategy, int64_t steps) {
  return {"model.objective=" + objective, "model.norm=" + norm, "masking.strategy=" + strategy,
          "train.max_steps=" + std::to_string(steps), "checkpoint.every_steps=0",
          "eval.every_steps=0", "eval.max_batches=2"};
}

/// Word index of each position (-1: special or padding), from the pieces' text: a word starts
/// at a piece with the U+2581 marker or after a special token.
std::vector<int64_t> word_ids(const text::Tokenizer& tokenizer, const std::vector<int64_t>& ids) {
  std::vector<int64_t> out(ids.size(), -1);
  int64_t word = -1;
  bool after_special = true;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string piece = tokenizer.id_to_piece(static_cast<int32_t>(ids[i]));
    bool special = false;
    for (const char* s : text::kSpecialPieces) special = special || piece == s;
    if (special) {
      after_special = true;
      continue;
    }
    if (after_special || piece.rfind("\xE2\x96\x81", 0) == 0) ++word;
    out[i] = word;
    after_special = false;
  }
  return out;
}

/// The train batches of `config` for `steps` (as the trainer draws them) select whole words
/// only: every group of adjacent selected positions starts at a word start and ends at a word
/// end. With `match_stats` each batch must also have its step's masked and sentence-pair
/// counts. Returns the share of groups that cover more than one word.
double check_batches(const config::RunConfig& config, const std::vector<StepStats>& steps,
                     bool match_stats = true) {
  const auto tokenizer = text::Tokenizer::load(config.tokenizer.model);
  masking::BatchStream stream(resolve_data_plan(config), tokenizer, data::Split::train);
  std::vector<int64_t> group_words;
  for (const auto& step : steps) {
    SCOPED_TRACE("step " + std::to_string(step.step));
    const auto batch = stream.next();
    if (!batch) {
      ADD_FAILURE() << "the train split ended";
      return 0;
    }
    if (match_stats) {
      EXPECT_EQ(batch->num_masked(), step.num_masked);
      EXPECT_EQ(static_cast<int64_t>(batch->nsp_labels.size()), step.pairs);
    }
    const auto& rows = stream.rows();
    for (int64_t r = 0; r < batch->batch_size; ++r) {
      std::vector<int64_t> ids(rows[r].ids.begin(), rows[r].ids.end());
      const auto words = word_ids(tokenizer, ids);
      const int64_t* labels = batch->labels.data() + r * batch->seq_len;
      for (size_t s = 0; s < words.size();) {
        if (labels[s] == -100) {
          ++s;
          continue;
        }
        const size_t begin = s;
        while (s < words.size() && labels[s] != -100) ++s;
        // A group of adjacent selected positions: whole words, no special token inside.
        EXPECT_GE(words[begin], 0) << "row " << r << " position " << begin;
        EXPECT_TRUE(begin == 0 || words[begin - 1] != words[begin])
            << "word split at row " << r << " position " << begin;
        EXPECT_TRUE(s == words.size() || words[s] < 0 || words[s] != words[s - 1])
            << "word split at row " << r << " position " << s;
        group_words.push_back(words[s - 1] - words[begin] + 1);
      }
    }
  }
  if (group_words.empty()) {
    ADD_FAILURE() << "nothing selected";
    return 0;
  }
  double multi_word = 0;
  for (int64_t w : group_words) multi_word += w > 1;
  return multi_word / static_cast<double>(group_words.size());
}

void expect_trains(const config::RunConfig& config, const std::vector<StepStats>& steps) {
  const int64_t count = config.train.max_steps;
  ASSERT_EQ(static_cast<int64_t>(steps.size()), count);
  for (const auto& s : steps) {
    EXPECT_FALSE(s.skipped) << "step " << s.step;
    EXPECT_TRUE(std::isfinite(s.loss) && std::isfinite(s.grad_norm)) << "step " << s.step;
    EXPECT_EQ(s.pairs, config.train.micro_batch_size) << "every row has a sentence-pair label";
    EXPECT_GT(s.nsp_loss_sum, 0);
  }
  // Falling: the last three steps against the first three (a step has only ~60 masked tokens
  // and 8 sentence pairs, so single steps are noisy).
  const double first = steps[0].loss + steps[1].loss + steps[2].loss;
  const double last = steps[count - 3].loss + steps[count - 2].loss + steps[count - 1].loss;
  EXPECT_LT(last, first) << "first " << steps[0].loss << ", last " << steps.back().loss;
}

// The sentence-pair accuracy is scored by evaluation and logged in every metrics row.
void expect_sentence_pairs_reported(const fs::path& dir, const EvalResult& eval,
                                    int64_t eval_step, int expected_eval_rows = 1) {
  EXPECT_GT(eval.num_sentence_pairs, 0);
  EXPECT_EQ(eval.num_sentence_pairs, eval.sequences);  // one label per evaluated sequence
  EXPECT_GE(eval.nsp_correct, 0);
  EXPECT_LE(eval.nsp_correct, eval.num_sentence_pairs);
  EXPECT_TRUE(std::isfinite(eval.nsp_loss_sum) && eval.nsp_loss_sum > 0);
  int train_rows = 0, eval_rows = 0;
  for (const auto& row : read_metrics(dir)) {
    if (row.contains("loss")) {
      ++train_rows;
      ASSERT_TRUE(row.contains("nsp_accuracy")) << row.dump();
      EXPECT_GE(row["nsp_accuracy"].get<double>(), 0.0);
      EXPECT_LE(row["nsp_accuracy"].get<double>(), 1.0);
    }
    if (row.contains("eval_loss")) {
      ++eval_rows;
      ASSERT_TRUE(row.contains("eval_nsp_accuracy")) << row.dump();
      if (row["step"] == eval_step) {
        EXPECT_EQ(row["eval_nsp_accuracy"].get<double>(), eval.nsp_accuracy());
      }
    }
  }
  EXPECT_GT(train_rows, 0);
  EXPECT_EQ(eval_rows, expected_eval_rows);
}

const torch::Tensor& param(const RecordedRun& run, const std::string& name) {
  for (const auto& [key, value] : run.params) {
    if (key == name) return value;
  }
  static const torch::Tensor none;
  ADD_FAILURE() << "no parameter " << name;
  return none;
}

TEST(TrainerObjectives, NspPreLnWholeWordTrainsAndScoresSentencePairs) {
  const auto dir = fresh_dir("objective_nsp");
  const auto config = tiny_config(dir, settings("nsp", "pre", "whole_word", 12));
  const auto run = run_trainer(config, "", 0, /*eval_first=*/true);
  ASSERT_EQ(run.exit_code, 0);
  expect_trains(config, run.steps);
  ASSERT_TRUE(run.before && run.eval);
  expect_sentence_pairs_reported(dir, *run.eval, 12, /*expected_eval_rows=*/2);
  // The same held-out batches (eval.seed) before and after training: the model learned.
  EXPECT_LT(run.eval->mlm_loss(), run.before->mlm_loss());
  EXPECT_EQ(run.eval->num_sentence_pairs, run.before->num_sentence_pairs);
  // Pre-LN ends in a final LayerNorm, and it was trained (initialised to ones); the NSP head
  // is there.
  const auto& gamma = param(run, "bert.encoder.final_layer_norm.weight");
  ASSERT_TRUE(gamma.defined());
  EXPECT_FALSE(torch::equal(gamma, torch::ones_like(gamma)));
  EXPECT_TRUE(param(run, "cls.seq_relationship.weight").defined());
  check_batches(config, run.steps);
}

// SOP with span masking on a pre-LN model: a run stopped by SIGTERM and resumed from its
// checkpoint gives the uninterrupted run's losses, gradient norms, metrics and weights bit
// for bit (dropout on, so the RNG state must come back too).
TEST(TrainerObjectives, SopPreLnSpanResumesBitExactly) {
  const auto sets = settings("sop", "pre", "span", 8);
  const auto straight_dir = fresh_dir("objective_sop_straight");
  const auto config = tiny_config(straight_dir, sets);
  const auto straight = run_trainer(config);
  ASSERT_EQ(straight.exit_code, 0);
  expect_trains(config, straight.steps);
  ASSERT_TRUE(straight.eval);
  expect_sentence_pairs_reported(straight_dir, *straight.eval, 8);
  const double span_multi_word = check_batches(config, straight.steps);
  // Spans (SpanBERT's law, 3.8 words on average before they are cut) cover several words far
  // more often than whole-word masking of the same rows, where only neighbours drawn
  // independently touch.
  auto whole_word = config;
  whole_word.masking.strategy = config::MaskingStrategy::whole_word;
  EXPECT_GT(span_multi_word, check_batches(whole_word, straight.steps, false));

  const auto dir = fresh_dir("objective_sop_split");
  const auto second = expect_stop_and_resume_equal(tiny_config(dir, sets), 4, straight);
  ASSERT_TRUE(second.eval);
  EXPECT_EQ(second.eval->nsp_correct, straight.eval->nsp_correct);
  EXPECT_EQ(second.eval->mlm_loss_sum, straight.eval->mlm_loss_sum);
  // metrics.jsonl reads as one run: the straight run's rows, NSP accuracy included.
  std::vector<nlohmann::json> want, got;
  for (const auto& row : read_metrics(straight_dir)) {
    if (row.contains("loss")) want.push_back({row["step"], row["loss"], row["nsp_accuracy"]});
  }
  for (const auto& row : read_metrics(dir)) {
    if (row.contains("loss")) got.push_back({row["step"], row["loss"], row["nsp_accuracy"]});
  }
  EXPECT_EQ(got.size(), 8u);
  EXPECT_EQ(got, want);
}

}  // namespace mlm::train::objectives

// The step's statistics stay on the device: the loop reads them once per logged step (all the
// steps since the last read at once) and reports exactly what a read after every step does;
// on a GPU the step itself never waits for the device.
#include <gtest/gtest.h>

#include "cuda_skip.h"
#include "mlm/config/data_plan.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/train/run/bootstrap.h"
#include "mlm/train/run/trainer.h"
#include "padded_batches.h"
#include "tools/poison_gradient.h"
#include "train_test_util.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

/// 20 steps logged every 5, step 7 non-finite; no progress line, no checkpoint until the end.
config::RunConfig logged_every_five(const fs::path& dir) {
  return tiny_config(dir, {"train.max_steps=20", "logging.every_steps=5", "checkpoint.every_steps=0",
                           "eval.every_steps=0", "eval.max_batches=1"});
}

struct ReadRun {
  int64_t reads = 0;
  TrainerState state;
  std::vector<torch::Tensor> params;
  std::vector<nlohmann::json> rows;  // metrics.jsonl without the clock's fields
};

ReadRun run_counting_reads(const fs::path& dir, bool every_step) {
  Trainer trainer(logged_every_five(dir), {"", nullptr, poison_gradient_at(7)});
  std::vector<int64_t> seen;
  if (every_step) trainer.on_step([&](const StepStats& s) { seen.push_back(s.step); });
  const int64_t before = step_reads();
  EXPECT_EQ(trainer.run(), 0);
  ReadRun run;
  run.reads = step_reads() - before;
  run.state = trainer.state();
  for (const auto& p : trainer.model()->parameters()) run.params.push_back(p.detach().clone());
  for (auto row : read_metrics(dir)) {
    for (const char* clock : {"tokens_per_s", "elapsed_s", "eval_time_s"}) row.erase(clock);
    run.rows.push_back(row);
  }
  if (every_step) EXPECT_EQ(seen.size(), 20u);
  return run;
}

TEST(StepReads, OncePerLoggedStepAndTheSameRunAsReadingEveryStep) {
  const auto logged = run_counting_reads(fresh_dir("reads_logged"), false);
  const auto every = run_counting_reads(fresh_dir("reads_every"), true);
  EXPECT_EQ(logged.reads, 4);  // steps 5, 10, 15, 20
  EXPECT_EQ(every.reads, 20);

  // Counted, logged and trained the same: the skipped step, the rows, the weights.
  EXPECT_EQ(logged.state.step, 20);
  EXPECT_EQ(logged.state.skipped_steps, 1);
  EXPECT_EQ(every.state.skipped_steps, 1);
  EXPECT_EQ(logged.state.tokens_seen, every.state.tokens_seen);
  ASSERT_EQ(logged.rows.size(), 5u);  // 4 train rows and the final evaluation
  EXPECT_EQ(logged.rows, every.rows);
  EXPECT_EQ(logged.rows[1]["skipped_steps"], 1);
  ASSERT_EQ(logged.params.size(), every.params.size());
  for (size_t i = 0; i < logged.params.size(); ++i) {
    EXPECT_TRUE(torch::equal(logged.params[i], every.params[i])) << "parameter " << i;
  }
}

TEST(StepReads, ADivergenceIsNoticedAtTheNextRead) {
  // Steps 3 to 20 non-finite, 2 in a row allowed: the error a read after every step raises at
  // step 4, raised at step 5's read (step 5 trained meanwhile, skipped, never counted).
  const auto dir = fresh_dir("reads_diverged");
  auto config = logged_every_five(dir);
  config.train.max_skipped_steps = 2;
  Trainer trainer(config, {"", nullptr, poison_gradient_at(3, 20)});
  const int64_t before = step_reads();
  try {
    trainer.run();
    FAIL() << "expected the run to stop";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2 non-finite steps in a row (train.max_skipped_steps) at step 4"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(trainer.state().step, 4);
  EXPECT_EQ(trainer.state().skipped_steps, 2);
  EXPECT_EQ(step_reads() - before, 1);
}

TEST(CudaStepReads, TheUpdateNeverWaitsForTheDevice) {
  // The update and the step's statistics: the reduction, the norm, the skip, the clip divisor,
  // the fused AdamW step with its device step counts. (The forward pass is the model's.)
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
#ifdef MLM_WITH_CUDA
  const auto config = tiny_config(fresh_dir("cuda_no_sync"),
                                  {"train.device=cuda", "train.grad_accum_steps=2", "optim.max_grad_norm=0.5"});
  const auto process = bootstrap(config, Launch::single_process);
  const auto tokenizer = open_tokenizer(config, *process.comm);
  auto model = build_model(config, tokenizer.vocab(), process.device);
  TrainingStep training(model, config, process.comm, process.compute_dtype);
  masking::BatchStream stream(config::resolve_data_plan(config), tokenizer, data::Split::train);
  const auto poison = poison_gradient_at(2);
  const auto params = split_parameters(*model).all();
  std::vector<DeviceStepStats> steps;
  for (int64_t step = 1; step <= 3; ++step) {
    const StepBatches batches = collect_step(stream, config.train.grad_accum_steps);
    DeviceStepStats stats;
    stats.known.step = step;
    stats.known.lr = 1e-3;
    stats.known.num_masked = static_cast<int64_t>(batches.masked);
    stats.known.pairs = static_cast<int64_t>(batches.pairs);
    stats.known.tokens = static_cast<int64_t>(batches.tokens);
    set_learning_rate(training.optimizer(), stats.known.lr);
    training.forward_backward(batches, stats.known, nullptr);
    poison(step, params);
    {
      const mlm::testing::NoDeviceSyncs no_syncs;
      stats.outcome = training.apply_update(stats.known, nullptr);
    }
    steps.push_back(stats);
  }
  const auto read = read_steps(steps);
  ASSERT_EQ(read.size(), 3u);
  for (const auto& s : read) {
    EXPECT_EQ(s.skipped, s.step == 2) << "step " << s.step;
    if (!s.skipped) EXPECT_TRUE(std::isfinite(s.loss) && std::isfinite(s.grad_norm)) << "step " << s.step;
  }
#endif
}

TEST(CudaStepReads, TheForwardAndBackwardNeverWaitForTheDevice) {
  // The whole step on padded batches (the layers on unpadded rows, variable-length attention,
  // the sparse head) under CUDA's sync debug mode: the pinned, non-blocking upload, the layout
  // sized by the host's counts, the loss sums kept on the device.
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
#ifdef MLM_WITH_CUDA
  struct Case {
    std::string architecture, precision;
    bool documents;
  };
  for (const auto& c : {Case{"bert", "bf16", false}, Case{"bert", "fp32", false}, Case{"bert", "fp16", true},
                        Case{"modernbert", "bf16", false}, Case{"modernbert", "bf16", true},
                        Case{"modernbert", "fp32", false}}) {
    SCOPED_TRACE(c.architecture + ", " + c.precision + (c.documents ? ", documents" : ""));
    std::vector<std::string> settings{"train.device=cuda", "train.precision=" + c.precision,
                                      "model.architecture=" + c.architecture, "train.grad_accum_steps=2"};
    if (c.architecture == "modernbert") settings.push_back("model.local_attention=16");
    if (c.documents) settings.insert(settings.end(), {"model.attend_across_documents=false", "data.cross_documents=true"});
    const auto config = tiny_config(fresh_dir("cuda_no_sync_step_" + c.architecture), settings);
    const auto process = bootstrap(config, Launch::single_process);
    const auto tokenizer = open_tokenizer(config, *process.comm);
    auto model = build_model(config, tokenizer.vocab(), process.device);
    TrainingStep training(model, config, process.comm, process.compute_dtype);
    const int64_t vocab = tokenizer.vocab().size;
    auto batches = [&] {
      return StepBatches({testing::padded_batch({64, 40, 20, 64, 10, 33, 50, 7}, 64, vocab, c.documents),
                          testing::padded_batch({12, 64, 30, 5, 64, 41, 22, 9}, 64, vocab, c.documents)});
    };
    std::vector<DeviceStepStats> steps;
    steps.push_back(training.run(1, 1e-3, batches()));  // the first step allocates what the next reuse
    {
      const mlm::testing::NoDeviceSyncs no_syncs;
      steps.push_back(training.run(2, 1e-3, batches()));
    }
    for (const auto& s : read_steps(steps)) {
      if (c.precision == "fp16") continue;  // its first loss scale may overflow: a skipped step
      EXPECT_FALSE(s.skipped) << "step " << s.step;
      EXPECT_TRUE(std::isfinite(s.loss)) << "step " << s.step;
    }
  }
#endif
}

}  // namespace
}  // namespace mlm::train

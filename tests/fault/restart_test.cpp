// Restart-safe runs: one writer per run directory, re-runnable job scripts (--resume auto),
// and runs side by side that share files (a checkpoint another run is still writing next to,
// a tokenizer both train at once).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "fault_util.h"
#include "mlm/test_paths.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "tiny_run.h"

namespace mlm::fault {
namespace {

std::string this_host() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// A second mlm-train on a directory in use exits 2 at once, naming the holder, and touches
// nothing; readers (mlm-eval, mlm-export) of the running run's checkpoints keep working; once
// the holder is killed (SIGKILL: no clean-up), the kernel has dropped its lock and the run can
// be continued.
TEST(OneWriter, ASecondRunIsRefusedNamingTheHolderAndAKilledHolderLeavesNoLock) {
  ScratchDir dir("writer");
  // keep_last 0: the run must not prune the checkpoint the readers below are reading.
  const TinyRun run(dir.path(), {"train.max_steps=100000", "checkpoint.every_steps=4",
                                 "checkpoint.keep_last=0"});
  Child first(run.command({}, 300));
  ASSERT_TRUE(first.wait_until([&] { return fs::exists(run.checkpoint(4)); }, 180));
  const auto metrics_before = read_text(run.run_dir() / "metrics.jsonl");

  const auto second = run.run({"--resume", "auto"}, {}, 60);
  EXPECT_TRUE(clean_failure(second, kExitBadUsage,
                            {run.run_dir().string(), "pid " + std::to_string(first.pid()),
                             "host " + this_host()}));
  EXPECT_LT(second.wall_s, 20) << "the refusal should come before any work";
  EXPECT_TRUE(first.running()) << "the holder must not be disturbed";
  // Nothing of the holder's was rewritten: its metrics only grew.
  const auto metrics_after = read_text(run.run_dir() / "metrics.jsonl");
  EXPECT_EQ(metrics_after.compare(0, metrics_before.size(), metrics_before), 0);

  std::vector<std::string> eval_args = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                        "--checkpoint", run.checkpoint(4).string()};
  for (const auto& setting : run.settings) eval_args.insert(eval_args.end(), {"--set", setting});
  const auto evaluated = run_tool("eval", eval_args, dir.path(), 120);
  EXPECT_EQ(evaluated.exit_code, 0) << evaluated.status() << "\n" << evaluated.err;
  const auto exported = run_tool("export", {"--checkpoint", run.checkpoint(4).string(),
                                            "--output", (dir / "hf").string()},
                                 dir.path(), 120);
  EXPECT_EQ(exported.exit_code, 0) << exported.status() << "\n" << exported.err;

  first.kill(SIGKILL);
  EXPECT_EQ(first.wait().term_signal, SIGKILL);
  const auto complete = complete_checkpoints(run.checkpoints());
  ASSERT_FALSE(complete.empty());
  const auto resumed_step = train::parse_checkpoint_step(complete.back());
  ASSERT_TRUE(resumed_step);
  TinyRun again = run;
  again.settings.push_back("train.max_steps=" + std::to_string(*resumed_step + 2));
  const auto continued = again.run({"--resume", "auto"});
  EXPECT_EQ(continued.exit_code, 0) << continued.status() << "\n" << continued.err;
  EXPECT_NE(continued.err.find("resumed from"), std::string::npos) << continued.err;
}

// The same command line, run again and again, is a job script that survives requeues: the
// first start is a new run, later ones continue it; a start whose model, data or masking
// settings differ from the checkpoint's is refused naming the keys, and train.resume is the
// config spelling of the flag.
TEST(ResumeAuto, StartsFreshContinuesAndRefusesChangedDataSettings) {
  ScratchDir dir("auto");
  // A constant rate after warm-up: the schedule must not depend on max_steps, which grows.
  const TinyRun reference(dir / "reference", {"train.max_steps=6", "checkpoint.every_steps=3",
                                              "schedule.decay=constant"});
  ASSERT_EQ(reference.run().exit_code, 0);

  TinyRun run(dir / "requeued", {"train.max_steps=3", "checkpoint.every_steps=3",
                                 "schedule.decay=constant"});
  const auto fresh = run.run({"--resume", "auto"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.status() << "\n" << fresh.err;
  EXPECT_NE(fresh.err.find("starting a new run"), std::string::npos) << fresh.err;

  TinyRun changed = run;
  changed.settings.insert(changed.settings.end(),
                          {"train.max_steps=6", "data.seq_len=32", "masking.mlm_probability=0.2"});
  EXPECT_TRUE(clean_failure(changed.run({"--resume", "auto"}), kExitBadUsage,
                            {"data.seq_len: 64 -> 32", "masking.mlm_probability",
                             run.checkpoint(3).string()},
                            Preceding::progress_logs));

  run.settings.insert(run.settings.end(), {"train.max_steps=6", "train.resume=auto"});
  const auto continued = run.run();
  ASSERT_EQ(continued.exit_code, 0) << continued.status() << "\n" << continued.err;
  EXPECT_NE(continued.err.find("resumed from " + run.checkpoint(3).string()), std::string::npos)
      << continued.err;
  EXPECT_EQ(compare_train_rows(read_metrics(reference.run_dir()), read_metrics(run.run_dir())), "");
}

// A run started from another run's checkpoint (--resume DIR) while that run goes on writing
// and pruning its own: the two do not disturb each other, and the new run takes exactly the
// steps the first one takes from there.
TEST(SiblingRuns, ResumingFromARunThatIsStillWritingTakesItsExactSteps) {
  ScratchDir dir("siblings");
  const TinyRun writer(dir / "writer", {"train.max_steps=16", "checkpoint.every_steps=1",
                                        "checkpoint.keep_last=0", "schedule.decay=constant"});
  Child running(writer.command({}, 300));
  ASSERT_TRUE(running.wait_until([&] { return fs::exists(writer.checkpoint(4)); }, 180));
  const TinyRun branch(dir / "branch", {"train.max_steps=8", "checkpoint.every_steps=4",
                                        "schedule.decay=constant"});
  const auto branched = branch.run({"--resume", writer.checkpoint(4).string()});
  ASSERT_EQ(branched.exit_code, 0) << branched.status() << "\n" << branched.err;
  const auto finished = running.wait();
  ASSERT_EQ(finished.exit_code, 0) << finished.status() << "\n" << finished.err;

  const Metrics want = read_metrics(writer.run_dir());
  const Metrics got = read_metrics(branch.run_dir());
  ASSERT_EQ(got.train.size(), 4u);  // steps 5-8: the branch's own rows
  for (int64_t step = 5; step <= 8; ++step) {
    ASSERT_TRUE(got.train.count(step)) << "step " << step;
    EXPECT_EQ(got.train.at(step)["loss"], want.train.at(step)["loss"]) << "step " << step;
  }
  EXPECT_EQ(compare_weights(writer.checkpoint(8) / "model.pt", branch.checkpoint(8) / "model.pt"), "");
}

// Two runs in sibling directories started together, both training the same missing
// tokenizer: both finish, and both use the one model that ended up in the shared file (the
// first writer's), so either can later be resumed with it.
TEST(SiblingRuns, TwoRunsTrainingOneMissingTokenizerShareTheFirstWritersModel) {
  ScratchDir dir("siblings");
  const std::string shared = (dir / "shared" / "spm.model").string();
  std::vector<std::unique_ptr<TinyRun>> runs;
  std::vector<std::unique_ptr<Child>> children;
  for (const char* name : {"a", "b"}) {
    runs.push_back(std::make_unique<TinyRun>(
        dir / name, std::vector<std::string>{"train.max_steps=2", "tokenizer.model=" + shared,
                                             "tokenizer.train_if_missing=true"}));
    children.push_back(std::make_unique<Child>(runs.back()->command({}, 300)));
  }
  for (size_t i = 0; i < children.size(); ++i) {
    const auto result = children[i]->wait();
    ASSERT_EQ(result.exit_code, 0) << "run " << i << ": " << result.status() << "\n" << result.err;
  }
  const std::string model = read_text(shared);
  ASSERT_FALSE(model.empty());
  for (const auto& run : runs) {
    EXPECT_EQ(read_text(run->checkpoint(2) / "tokenizer.model"), model)
        << run->root << " trained with another tokenizer than the shared file";
  }
  for (const auto& entry : fs::directory_iterator(dir / "shared")) {
    EXPECT_EQ(entry.path().filename(), "spm.model") << "left behind: " << entry.path();
  }
}

}  // namespace
}  // namespace mlm::fault

// logging.tensorboard: the event file TensorBoard's own reader (the venv's tensorboard
// package, EventAccumulator) reads back as metrics.jsonl's numbers, each step once, also after
// a resume that drops what an interrupted run logged past its checkpoint; a torn last record
// is dropped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "mlm/train/run/event_file.h"
#include "mlm/train/run/tensorboard_log.h"
#include "recorded_run.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

// {tag: [[step, value], ...]} as TensorBoard's EventAccumulator reads the run directory.
nlohmann::json read_with_tensorboard(const fs::path& run_dir) {
  const auto script = run_dir / "read_events.py";
  std::ofstream(script) << "import json, sys\n"
                           "from tensorboard.backend.event_processing.event_accumulator import EventAccumulator\n"
                           "ea = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0})\n"
                           "ea.Reload()\n"
                           "out = {t: [[e.step, e.value] for e in ea.Scalars(t)] for t in ea.Tags()['scalars']}\n"
                           "json.dump(out, open(sys.argv[2], 'w'))\n";
  const auto out = run_dir / "events.json";
  const std::string command = std::string(MLM_PYTHON) + " " + script.string() + " " + run_dir.string() +
                              " " + out.string();
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return nlohmann::json::parse(read_text(out));
}

// metrics.jsonl's `key` as [[step, value as float], ...]: of the train rows, or of the
// evaluation rows for an eval_ key.
nlohmann::json metrics_series(const fs::path& run_dir, const std::string& key) {
  const bool eval = key.rfind("eval_", 0) == 0;
  nlohmann::json series = nlohmann::json::array();
  for (const auto& row : read_metrics(run_dir)) {
    if (row.contains(key) && row.contains("eval_loss") == eval) {
      series.push_back({row["step"], static_cast<double>(row[key].get<float>())});
    }
  }
  return series;
}

const std::vector<std::string> kSets = {"train.max_steps=6", "checkpoint.every_steps=2",
                                        "checkpoint.keep_last=0", "eval.every_steps=3",
                                        "eval.max_batches=1", "logging.tensorboard=true"};

TEST(TensorBoard, TheReaderSeesMetricsJsonlsNumbers) {
  const auto dir = fresh_dir("tensorboard_straight");
  ASSERT_EQ(run_trainer(tiny_config(dir, kSets)).exit_code, 0);
  const auto events = read_with_tensorboard(dir);
  for (const char* key : {"loss", "mlm_accuracy", "lr", "grad_norm", "tokens"}) {
    EXPECT_EQ(events["train/" + std::string(key)], metrics_series(dir, key)) << key;
  }
  EXPECT_EQ(events["train/loss"].size(), 6u);
  EXPECT_EQ(events["eval/loss"], metrics_series(dir, "eval_loss"));
  EXPECT_EQ(events["eval/loss"].size(), 2u);  // steps 3 and 6
  EXPECT_FALSE(events.contains("train/eval_loss"));
}

TEST(TensorBoard, AResumeDropsWhatTheInterruptedRunLoggedAfterItsCheckpoint) {
  const auto dir = fresh_dir("tensorboard_resumed");
  ASSERT_EQ(run_trainer(tiny_config(dir, kSets)).exit_code, 0);
  // As if killed after logging step 5 with step 2's checkpoint the last written, its last
  // event torn in half.
  fs::remove_all(dir / "checkpoints" / "step_00000004");
  fs::remove_all(dir / "checkpoints" / "step_00000006");
  const auto file = dir / TensorBoardLog::kFileName;
  fs::resize_file(file, fs::file_size(file) - 10);
  const auto resumed = run_trainer(tiny_config(dir, kSets), "latest");
  ASSERT_EQ(resumed.exit_code, 0);
  ASSERT_EQ(resumed.steps.size(), 4u);

  const auto events = read_with_tensorboard(dir);
  const auto losses = metrics_series(dir, "loss");
  ASSERT_EQ(losses.size(), 6u);  // metrics.jsonl reads as one run
  EXPECT_EQ(events["train/loss"], losses);  // each step once, the resumed run's values
  EXPECT_EQ(events["eval/loss"], metrics_series(dir, "eval_loss"));
  EXPECT_EQ(losses[5][1].get<double>(), static_cast<double>(static_cast<float>(resumed.steps.back().loss)));
}

TEST(EventFile, RecordsRoundTripAndATornTailIsDropped) {
  const auto dir = fresh_dir("event_file");
  const auto path = dir / "events.out.tfevents.test";
  const auto first = scalars_event(1.5, 7, {{"train/loss", 2.25f}});
  const auto second = scalars_event(2.5, 8, {{"train/loss", 2.0f}, {"train/lr", 1e-3f}});
  std::ofstream(path, std::ios::binary) << framed_record(version_event(1.0)) << framed_record(first)
                                        << framed_record(second);
  auto records = read_records(path);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[1], first);
  EXPECT_EQ(event_step(records[0]), 0);
  EXPECT_EQ(event_step(records[2]), 8);
  fs::resize_file(path, fs::file_size(path) - 3);
  records = read_records(path);
  EXPECT_EQ(records.size(), 2u);
  // A flipped byte inside a record stops the reading there too.
  std::fstream damaged(path, std::ios::in | std::ios::out | std::ios::binary);
  damaged.seekp(30);
  damaged.put('\x7f');
  damaged.close();
  EXPECT_LT(read_records(path).size(), 2u);
}

}  // namespace
}  // namespace mlm::train

// Checkpoints under attack: a write failure (the disk fills up), and corrupted checkpoints on
// disk (truncated, flipped bytes, missing files, no DONE, state that is not JSON).
// Explicit `--resume DIR` -> one clear error naming the file; `--resume latest` -> the bad one
// is skipped with a warning and the run continues exactly from the previous one.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "fault_util.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/util/errors.h"
#include "tiny_run.h"

namespace mlm::fault {
namespace {

constexpr int64_t kSteps = 8;
constexpr int64_t kEvery = 4;

std::vector<std::string> settings() {
  return {"train.max_steps=" + std::to_string(kSteps),
          "checkpoint.every_steps=" + std::to_string(kEvery), "checkpoint.keep_last=0"};
}

// One finished run with checkpoints at steps 4 and 8, shared by the tests of this file in
// one process (ctest runs each test in its own process: then it is made once per test).
const fs::path& base_run_root() {
  static ScratchDir* dir = nullptr;
  if (dir == nullptr) {
    dir = new ScratchDir("ckpt_base");  // lives until exit; removed by the OS temp policy
    const TinyRun run(dir->path(), settings());
    const auto result = run.run();
    if (result.exit_code != 0) {
      ADD_FAILURE() << "base run failed: " << result.status() << "\n" << result.err;
    }
    std::atexit([] { delete dir; });
  }
  return dir->path();
}

// A copy of the base run in `root`.
TinyRun copy_of_base(const fs::path& root) {
  const TinyRun base(base_run_root(), settings());
  fs::copy(base.run_dir(), root / "run", fs::copy_options::recursive);
  return TinyRun(root, settings());
}

uint32_t crc32_of(const fs::path& path) {
  const std::string bytes = read_text(path);
  return static_cast<uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()),
              static_cast<uInt>(bytes.size())));
}

// Rewrites DONE so that it matches the files as they are now: the corruption then gets past
// the manifest check and must be caught by the reader of the file itself.
void rewrite_manifest(const fs::path& dir) {
  auto manifest = nlohmann::json::parse(read_text(dir / "DONE"));
  for (auto& [name, entry] : manifest["files"].items()) {
    entry["bytes"] = fs::file_size(dir / name);
    entry["crc32"] = crc32_of(dir / name);
  }
  write_text(dir / "DONE", manifest.dump(2) + "\n");
}

struct Corruption {
  std::string name;
  std::string file;  // the file the error must name
  std::function<void(const fs::path& dir)> apply;
};

std::vector<Corruption> corruptions() {
  const auto truncate_half = [](const fs::path& path) {
    fs::resize_file(path, fs::file_size(path) / 2);
  };
  const auto flip_middle = [](const fs::path& path) {
    std::string bytes = read_text(path);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    write_text(path, bytes);
  };
  return {
      {"truncated_model", "model.pt", [=](const fs::path& d) { truncate_half(d / "model.pt"); }},
      {"flipped_byte_model", "model.pt", [=](const fs::path& d) { flip_middle(d / "model.pt"); }},
      {"missing_optimizer", "optimizer.pt",
       [](const fs::path& d) { fs::remove(d / "optimizer.pt"); }},
      {"missing_done", "DONE", [](const fs::path& d) { fs::remove(d / "DONE"); }},
      {"state_not_json", "trainer_state.json",
       [](const fs::path& d) { write_text(d / "trainer_state.json", "{\"step\": 8, oops"); }},
      // The same damage behind a DONE that matches it (a checkpoint copied by hand, or
      // written by another tool): the file's own reader must refuse it.
      {"truncated_model_behind_valid_done", "model.pt",
       [=](const fs::path& d) {
         truncate_half(d / "model.pt");
         rewrite_manifest(d);
       }},
      {"truncated_optimizer_behind_valid_done", "optimizer.pt",
       [=](const fs::path& d) {
         truncate_half(d / "optimizer.pt");
         rewrite_manifest(d);
       }},
      {"state_not_json_behind_valid_done", "trainer_state.json",
       [=](const fs::path& d) {
         write_text(d / "trainer_state.json", "step = 8\n");
         rewrite_manifest(d);
       }},
      {"state_wrong_types_behind_valid_done", "trainer_state.json",
       [=](const fs::path& d) {
         auto state = nlohmann::json::parse(read_text(d / "trainer_state.json"));
         state["step"] = "eight";
         write_text(d / "trainer_state.json", state.dump());
         rewrite_manifest(d);
       }},
  };
}

// Explicit resume from a corrupted checkpoint: exit 1, one error line naming the file.
TEST(CorruptCheckpoint, ExplicitResumeFailsWithOneLineNamingTheFile) {
  for (const auto& corruption : corruptions()) {
    SCOPED_TRACE(corruption.name);
    ScratchDir dir("corrupt");
    const TinyRun run = copy_of_base(dir.path());
    const fs::path target = run.checkpoint(kSteps);
    corruption.apply(target);
    const auto result = run.run({"--resume", target.string()});
    EXPECT_TRUE(clean_failure(result, kExitRuntimeFailure, {corruption.file}, Preceding::progress_logs));
  }
}

// `latest` skips the corrupted newest checkpoint with a warning naming it, resumes from the
// one before, and ends with exactly the weights of the uncorrupted run.
void expect_latest_skips(const Corruption& corruption) {
  SCOPED_TRACE(corruption.name);
  ScratchDir dir("corrupt");
  const TinyRun run = copy_of_base(dir.path());
  const fs::path target = run.checkpoint(kSteps);
  const fs::path want_model = dir / "want_model.pt";
  fs::copy_file(target / "model.pt", want_model);
  corruption.apply(target);
  const auto result = run.run({"--resume", "latest"});
  ASSERT_EQ(result.exit_code, 0) << result.status() << "\n" << result.err;
  int warnings = 0;
  for (const auto& line : result.err_lines()) {
    warnings += line.find("warn") != std::string::npos &&
                line.find(train::checkpoint_dir_name(kSteps)) != std::string::npos;
  }
  EXPECT_EQ(warnings, 1) << result.err;
  EXPECT_EQ(compare_weights(want_model, target / "model.pt"), "");
}

TEST(CorruptCheckpoint, LatestSkipsAFlippedByteAndAMissingDone) {
  for (const auto& corruption : corruptions()) {
    if (corruption.name == "flipped_byte_model" || corruption.name == "missing_done") {
      expect_latest_skips(corruption);
    }
  }
}

TEST(CorruptCheckpointSlow, LatestSkipsEveryCorruption) {
  for (const auto& corruption : corruptions()) {
    if (corruption.name.find("behind_valid_done") != std::string::npos) continue;
    expect_latest_skips(corruption);
  }
}

// The disk fills up while checkpoint 8 is written (RLIMIT_FSIZE with SIGXFSZ ignored: every
// write past 512 KiB fails with EFBIG, as on a full disk). The run stops with exit 1 and one
// error naming the checkpoint; checkpoint 4 stays intact, no temporary directory is left, and
// resuming (with space again) ends with exactly the weights of the run that never failed.
TEST(DiskFull, CheckpointWriteFailureExits1AndKeepsThePreviousCheckpoint) {
  ScratchDir dir("diskfull");
  const TinyRun run = copy_of_base(dir.path());
  const fs::path last = run.checkpoint(kSteps);
  const fs::path want_model = dir / "want_model.pt";
  fs::copy_file(last / "model.pt", want_model);
  fs::remove_all(last);  // as if the run had been stopped right after step 4's checkpoint
  const std::string before = read_text(run.checkpoint(kEvery) / "DONE");

  auto options = run.command({"--resume", "latest"});
  options.file_size_limit = 512 << 10;
  const auto full = run_child(options);
  EXPECT_TRUE(clean_failure(full, kExitRuntimeFailure, {train::checkpoint_dir_name(kSteps)},
                            Preceding::progress_logs));
  EXPECT_EQ(complete_checkpoints(run.checkpoints()),
            std::vector<std::string>{train::checkpoint_dir_name(kEvery)});
  EXPECT_EQ(read_text(run.checkpoint(kEvery) / "DONE"), before);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(run.checkpoints())) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{train::checkpoint_dir_name(kEvery)})
      << "a partial checkpoint directory was left behind";

  const auto resumed = run.run({"--resume", "latest"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.status() << "\n" << resumed.err;
  EXPECT_EQ(compare_weights(want_model, last / "model.pt"), "");
}

}  // namespace
}  // namespace mlm::fault

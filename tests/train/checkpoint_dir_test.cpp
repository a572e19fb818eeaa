#include "mlm/train/checkpoint/checkpoint_dir.h"

#include <gtest/gtest.h>

#include <fstream>

#include "mlm/test_paths.h"
#include "mlm/util/errors.h"

namespace fs = std::filesystem;

namespace mlm::train {
namespace {

const std::vector<std::string> kRequired = {"a.bin", "b.txt"};

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::path(MLM_BINARY_DIR) / "test-train" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path write_step(const fs::path& root, int64_t step) {
  return write_checkpoint_dir(root, step, [&](const fs::path& tmp) {
    write_file_durably(tmp / "a.bin", std::string(1000, static_cast<char>(step)));
    write_file_durably(tmp / "b.txt", "step " + std::to_string(step));
  });
}

void flip_byte(const fs::path& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x5a));
}

std::string error_of(const fs::path& dir) {
  try {
    verify_checkpoint_dir(dir, kRequired);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckpointDir, WritesCompleteDirectoryWithManifestAndNoTemporaries) {
  const auto root = fresh("ckptdir_write");
  const auto dir = write_step(root, 7);
  EXPECT_EQ(dir.filename(), "step_00000007");
  EXPECT_TRUE(fs::exists(dir / "DONE"));
  EXPECT_NO_THROW(verify_checkpoint_dir(dir, kRequired));
  EXPECT_EQ(parse_checkpoint_step("step_00000007"), 7);
  EXPECT_FALSE(parse_checkpoint_step(".tmp-step_00000007"));
  for (const auto& entry : fs::directory_iterator(root)) {
    EXPECT_EQ(entry.path().filename().string().rfind(".tmp", 0), std::string::npos);
  }
}

TEST(CheckpointDir, CorruptionIsNamedByFile) {
  const auto root = fresh("ckptdir_corrupt");
  const auto dir = write_step(root, 1);
  flip_byte(dir / "a.bin", 10);
  EXPECT_NE(error_of(dir).find("a.bin is corrupted"), std::string::npos) << error_of(dir);

  const auto dir2 = write_step(root, 2);
  fs::resize_file(dir2 / "b.txt", 2);
  EXPECT_NE(error_of(dir2).find("b.txt is truncated"), std::string::npos) << error_of(dir2);

  const auto dir3 = write_step(root, 3);
  fs::remove(dir3 / "DONE");
  EXPECT_NE(error_of(dir3).find("DONE is missing"), std::string::npos) << error_of(dir3);

  const auto dir4 = write_step(root, 4);
  fs::remove(dir4 / "a.bin");
  EXPECT_NE(error_of(dir4).find("a.bin is missing"), std::string::npos) << error_of(dir4);

  const auto dir5 = write_step(root, 5);
  { std::ofstream(dir5 / "DONE") << "{not json"; }
  EXPECT_NE(error_of(dir5).find("DONE is not valid JSON"), std::string::npos) << error_of(dir5);

  EXPECT_THROW(verify_checkpoint_dir(dir5, {"missing.pt"}), CheckpointError);
}

TEST(CheckpointDir, LatestSkipsIncompleteAndCorruptOnes) {
  const auto root = fresh("ckptdir_latest");
  EXPECT_FALSE(find_latest_checkpoint(root / "nothing", kRequired));
  write_step(root, 10);
  write_step(root, 20);
  const auto newest = write_step(root, 30);
  flip_byte(newest / "a.bin", 0);
  fs::create_directories(root / "step_00000040");  // a crash before DONE
  fs::create_directories(root / ".tmp-step_00000050");
  const auto latest = find_latest_checkpoint(root, kRequired);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->filename(), "step_00000020");
}

TEST(CheckpointDir, FailedWriteLeavesPreviousCheckpointsIntact) {
  const auto root = fresh("ckptdir_fail");
  write_step(root, 1);
  EXPECT_THROW(write_checkpoint_dir(root, 2,
                                    [](const fs::path& tmp) {
                                      write_file_durably(tmp / "a.bin", "partial");
                                      throw std::runtime_error("disk full");
                                    }),
               CheckpointError);
  EXPECT_FALSE(fs::exists(root / "step_00000002"));
  EXPECT_FALSE(fs::exists(root / ".tmp-step_00000002"));
  EXPECT_EQ(find_latest_checkpoint(root, kRequired)->filename(), "step_00000001");
  // Unwritable destination: a clear error, nothing half-written left behind.
  EXPECT_THROW(write_checkpoint_dir("/proc/forbidden", 3, [](const fs::path&) {}), CheckpointError);
}

TEST(CheckpointDir, RewritingAStepReplacesIt) {
  const auto root = fresh("ckptdir_rewrite");
  write_step(root, 3);
  write_checkpoint_dir(root, 3, [](const fs::path& tmp) {
    write_file_durably(tmp / "a.bin", "new");
    write_file_durably(tmp / "b.txt", "new");
  });
  EXPECT_EQ(read_file_bytes(root / "step_00000003" / "a.bin"), "new");
  EXPECT_NO_THROW(verify_checkpoint_dir(root / "step_00000003", kRequired));
}

TEST(CheckpointDir, PruneKeepsTheNewestComplete) {
  const auto root = fresh("ckptdir_prune");
  for (int step = 1; step <= 5; ++step) write_step(root, step);
  fs::create_directories(root / ".tmp-step_00000006");
  prune_checkpoints(root, 2, kRequired);
  EXPECT_FALSE(fs::exists(root / "step_00000001"));
  EXPECT_FALSE(fs::exists(root / "step_00000003"));
  EXPECT_TRUE(fs::exists(root / "step_00000004"));
  EXPECT_TRUE(fs::exists(root / "step_00000005"));
  EXPECT_FALSE(fs::exists(root / ".tmp-step_00000006"));
  prune_checkpoints(root, 0, kRequired);  // 0 = keep all
  EXPECT_TRUE(fs::exists(root / "step_00000004"));
}

}  // namespace
}  // namespace mlm::train

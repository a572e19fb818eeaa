// mlm-data prepare on a disk that fills up (RLIMIT_FSIZE with SIGXFSZ ignored, as the
// trainer's DiskFull test): one error line naming the shard, exit 2, no temporary file left,
// the progress file kept, and a rerun with space again ends with the store that never failed.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "fault_util.h"
#include "mlm/util/errors.h"

namespace mlm::fault::prepare_fault {

std::string fixture(const std::string& name) { return std::string(MLM_FIXTURES_DIR) + "/corpus/" + name; }

/// relative path -> bytes of every file under `dir`.
std::map<std::string, std::string> store_files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = read_text(entry.path());
  }
  return files;
}

TEST(PrepareDiskFull, OneErrorLineKeepsWhatWasWrittenAndResumes) {
  ScratchDir dir("prepare_full");
  write_text(dir / "prepare.yaml",
             "tokenizer:\n  model: " + (dir / "spm.model").string() +
                 "\n  train_if_missing: true\n  vocab_size: 200\n"
                 "data:\n  train_files: [" + fixture("train.txt") + ", " + fixture("docs.jsonl") +
                 "]\n  valid_files: [" + fixture("valid.txt") + "]\n");
  const auto prepare = [&](const std::string& store) {
    return std::vector<std::string>{"prepare", "--config", (dir / "prepare.yaml").string(), "--set",
                                    "data.store=" + (dir / store).string()};
  };
  // The reference store (and the tokenizer, trained on first use, before any limit).
  const auto whole = run_tool("data", prepare("whole"), dir.path());
  ASSERT_EQ(whole.exit_code, 0) << whole.status() << "\n" << whole.err;

  // The train shard's token file (~70 KB) cannot be written; the progress file (~1 KB) can.
  ChildOptions full;
  full.argv = prepare("full");
  full.argv.insert(full.argv.begin(), tool_path("data"));
  full.cwd = dir.path().string();
  full.file_size_limit = 16 << 10;
  const auto failed = run_child(full);
  EXPECT_TRUE(clean_failure(failed, kExitBadUsage, {"train/000000.tokens", "data error"},
                            Preceding::progress_logs));
  ASSERT_TRUE(fs::exists(dir / "full" / "prepare.progress.json"));
  EXPECT_FALSE(fs::exists(dir / "full" / "manifest.json"));
  for (const auto& [name, bytes] : store_files(dir / "full")) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "temporary file left: " << name;
  }

  const auto resumed = run_tool("data", prepare("full"), dir.path());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.status() << "\n" << resumed.err;
  EXPECT_EQ(store_files(dir / "full"), store_files(dir / "whole"));
}

}  // namespace mlm::fault::prepare_fault

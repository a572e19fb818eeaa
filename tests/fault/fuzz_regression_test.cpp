// Inputs the fuzzers found (fuzz/regressions/<target>/), replayed through the same harness
// (fuzz_replay_*.cpp) on every test run. Each replay runs in a child process with a memory
// limit and a timeout, because a regression may be a hang or a runaway allocation; the child
// is this test executable, filtered to FuzzReplayChild.Replay.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fault_util.h"

extern "C" int mlm_replay_config_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_document_reader_fuzzer(const uint8_t* data, size_t size);

namespace mlm::fault {
namespace {

constexpr const char* kTargetEnv = "MLM_FUZZ_REPLAY_TARGET";
constexpr const char* kInputEnv = "MLM_FUZZ_REPLAY_INPUT";

// The child side: replays one input; an escaping exception or a failed check ends the process
// abnormally (as under the fuzzer).
TEST(FuzzReplayChild, Replay) {
  const char* target = std::getenv(kTargetEnv);
  const char* input = std::getenv(kInputEnv);
  if (target == nullptr || input == nullptr) {
    GTEST_SKIP() << "runs only as the child of FuzzRegression.* (" << kTargetEnv << " unset)";
  }
  const std::string bytes = read_text(input);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (std::string(target) == "config_fuzzer") {
    mlm_replay_config_fuzzer(data, bytes.size());
  } else if (std::string(target) == "document_reader_fuzzer") {
    mlm_replay_document_reader_fuzzer(data, bytes.size());
  } else {
    FAIL() << "unknown fuzz target " << target;
  }
}

void replay_all(const std::string& target) {
  const fs::path dir = fs::path(MLM_SOURCE_DIR) / "fuzz/regressions" / target;
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no stored inputs in " << dir;
  int replayed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    SCOPED_TRACE(entry.path().string());
    ChildOptions options;
    options.argv = {fs::read_symlink("/proc/self/exe").string(),
                    "--gtest_filter=FuzzReplayChild.Replay"};
    options.env = {{kTargetEnv, target},
                   {kInputEnv, entry.path().string()},
                   {"MLM_LOG_LEVEL", "error"}};
    options.timeout_s = 20;
    options.address_space_limit = int64_t{3} << 30;
    const auto result = run_child(options);
    EXPECT_TRUE(result.exit_code == 0 && result.term_signal == 0 && !result.timed_out)
        << result.status() << "\n" << result.out.substr(result.out.size() > 3000 ? result.out.size() - 3000 : 0)
        << result.err.substr(0, 3000);
    ++replayed;
  }
  ::testing::Test::RecordProperty("replayed", replayed);
}

TEST(FuzzRegression, ConfigFuzzerInputs) { replay_all("config_fuzzer"); }
TEST(FuzzRegression, DocumentReaderFuzzerInputs) { replay_all("document_reader_fuzzer"); }

}  // namespace
}  // namespace mlm::fault

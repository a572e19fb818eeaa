// Inputs the fuzzers found (fuzz/regressions/<target>/), replayed through the same harness
// (fuzz_replay_*.cpp) on every test run. Each replay runs in a child process with a memory
// limit and a timeout, because a regression may be a hang or a runaway allocation; the child
// is this test executable running the same test with the input named in its environment, in
// which case the test replays that one input and ends the process (so the default run has no
// child-only test that would have to skip).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "fault_util.h"

extern "C" int mlm_replay_config_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_document_reader_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_task_config_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_tokenizer_json_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_safetensors_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_torch_save_fuzzer(const uint8_t* data, size_t size);
extern "C" int mlm_replay_config_json_fuzzer(const uint8_t* data, size_t size);

namespace mlm::fault {
namespace {

constexpr const char* kTargetEnv = "MLM_FUZZ_REPLAY_TARGET";
constexpr const char* kInputEnv = "MLM_FUZZ_REPLAY_INPUT";

using Harness = int (*)(const uint8_t*, size_t);

// The fuzz targets (fuzz/<name>.cpp) whose harness this suite compiles in.
const std::map<std::string, Harness>& harnesses() {
  static const std::map<std::string, Harness> all = {
      {"config_fuzzer", mlm_replay_config_fuzzer},
      {"document_reader_fuzzer", mlm_replay_document_reader_fuzzer},
      {"task_config_fuzzer", mlm_replay_task_config_fuzzer},
      {"tokenizer_json_fuzzer", mlm_replay_tokenizer_json_fuzzer},
      {"safetensors_fuzzer", mlm_replay_safetensors_fuzzer},
      {"torch_save_fuzzer", mlm_replay_torch_save_fuzzer},
      {"config_json_fuzzer", mlm_replay_config_json_fuzzer}};
  return all;
}

fs::path regressions_dir() { return fs::path(MLM_SOURCE_DIR) / "fuzz" / "regressions"; }

// What the child prints once the harness returned: proof that it replayed the input.
std::string replayed_marker(const std::string& target, size_t bytes) {
  return "fuzz replay: " + target + ", " + std::to_string(bytes) + " bytes, returned";
}

// The child side: when the environment names an input, replay it and end the process. An
// escaping exception or a failed check ends it abnormally (as under the fuzzer); returning
// normally is exit 0.
void replay_if_child() {
  const char* target = std::getenv(kTargetEnv);
  const char* input = std::getenv(kInputEnv);
  if (target == nullptr || input == nullptr) return;
  const auto harness = harnesses().find(target);
  if (harness == harnesses().end()) {
    std::fprintf(stderr, "unknown fuzz target %s\n", target);
    std::fflush(stderr);
    _exit(3);
  }
  const std::string bytes = read_text(input);
  harness->second(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  std::printf("%s\n", replayed_marker(target, bytes.size()).c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(0);
}

// The fuzz targets of fuzz/ and the harnesses here are the same set: a new target cannot go
// without replays of its findings.
TEST(FuzzRegression, EveryFuzzTargetHasAReplayHarness) {
  std::set<std::string> targets, compiled;
  for (const auto& entry : fs::directory_iterator(fs::path(MLM_SOURCE_DIR) / "fuzz")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".cpp" && name.find("_fuzzer") != std::string::npos) {
      targets.insert(entry.path().stem().string());
    }
  }
  for (const auto& [name, harness] : harnesses()) compiled.insert(name);
  EXPECT_EQ(targets, compiled);
}

// Every stored input of every target, each in its own child. A missing or empty regressions
// directory, or a directory for a target this suite cannot replay, is a failure: the inputs
// are committed with the source, so their absence means they were lost, not that there is
// nothing to do.
TEST(FuzzRegression, EveryStoredInputReplaysCleanly) {
  replay_if_child();
  ASSERT_TRUE(fs::is_directory(regressions_dir())) << "no stored inputs in " << regressions_dir();
  int replayed = 0;
  for (const auto& target_dir : fs::directory_iterator(regressions_dir())) {
    if (!target_dir.is_directory()) continue;  // README.md
    const std::string target = target_dir.path().filename().string();
    if (harnesses().count(target) == 0) {
      ADD_FAILURE() << target_dir.path() << ": no fuzz target " << target << " to replay it with";
      continue;
    }
    int in_target = 0;
    for (const auto& entry : fs::directory_iterator(target_dir)) {
      if (!entry.is_regular_file()) continue;
      SCOPED_TRACE(entry.path().string());
      ChildOptions options;
      options.argv = {fs::read_symlink("/proc/self/exe").string(),
                      "--gtest_filter=FuzzRegression.EveryStoredInputReplaysCleanly"};
      options.env = {{kTargetEnv, target},
                     {kInputEnv, entry.path().string()},
                     {"MLM_LOG_LEVEL", "error"}};
      options.timeout_s = 20;
      options.address_space_limit = int64_t{3} << 30;
      const auto result = run_child(options);
      EXPECT_TRUE(result.exit_code == 0 && result.term_signal == 0 && !result.timed_out)
          << result.status() << "\n"
          << result.out.substr(result.out.size() > 3000 ? result.out.size() - 3000 : 0)
          << result.err.substr(0, 3000);
      EXPECT_NE(result.out.find(replayed_marker(target, fs::file_size(entry.path()))),
                std::string::npos)
          << "the child did not replay the input:\n" << result.out;
      ++in_target;
    }
    EXPECT_GT(in_target, 0) << target_dir.path() << " holds no input";
    replayed += in_target;
  }
  EXPECT_GT(replayed, 0) << "no stored inputs in " << regressions_dir();
  ::testing::Test::RecordProperty("replayed", replayed);
}

}  // namespace
}  // namespace mlm::fault

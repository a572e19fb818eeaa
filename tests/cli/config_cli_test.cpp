// mlm-train's config handling end to end: --print-config prints YAML and exits 0; every bad
// config exits 2 with exactly one line on stderr naming the file, key and fix.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/test_paths.h"
#include "mlm/version.h"

namespace mlm::cli {
namespace {

using config::testing::fingerprint;
using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;

CliRun mlm_train(const TempDir& dir, const std::vector<std::string>& args) {
  return run_tool("mlm-train", dir, args, /*in_dir=*/false);
}

std::string shipped(const std::string& name) {
  return std::string(MLM_SOURCE_DIR) + "/configs/" + name + ".yaml";
}

// Exit 2 and exactly one stderr line that holds every piece.
void expect_one_line_error(const CliRun& run, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(run.err.empty());
  if (!run.err.empty()) EXPECT_EQ(run.err.back(), '\n');
  for (const auto& piece : pieces) {
    EXPECT_NE(run.err.find(piece), std::string::npos) << "missing \"" << piece << "\" in "
                                                      << run.err;
  }
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(ConfigCli, PrintConfigPrintsResolvedYaml) {
  TempDir dir;
  const CliRun run = mlm_train(dir, {"--config", shipped("base"), "--print-config"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.err.empty()) << run.err;
  EXPECT_EQ(run.out.rfind("model:\n", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("  hidden_size: 768\n"), std::string::npos);
  const auto printed = config::load_config_from_string(run.out, "<stdout>");
  EXPECT_EQ(fingerprint(printed), fingerprint(config::load_config(shipped("base"))));
}

TEST(ConfigCli, PrintConfigAppliesOverridesAndNeedsNoData) {
  TempDir dir;
  const CliRun run = mlm_train(dir, {"--config", shipped("tiny"), "--set", "data.train_files=[]",
                                  "--set", "optim.learning_rate=3e-4", "--print-config"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  train_files: []\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  learning_rate: 3.0e-4\n"), std::string::npos) << run.out;
}

TEST(ConfigCli, IndivisibleHiddenSizeFromSet) {
  TempDir dir;
  const CliRun run = mlm_train(
      dir, {"--config", shipped("base"), "--set", "model.hidden_size=770", "--print-config"});
  expect_one_line_error(run, {"model.hidden_size (770)", "model.num_attention_heads (12)",
                              "divisible", "768 or 780", "(from --set 'model.hidden_size=770')"});
}

TEST(ConfigCli, MisspelledKeyInFile) {
  TempDir dir;
  const auto path = dir.write("typo.yaml", "optim:\n  learnig_rate: 1.0e-4\n");
  const CliRun run = mlm_train(dir, {"--config", path});
  expect_one_line_error(run, {path + ":2: unknown key 'optim.learnig_rate'",
                              "did you mean 'optim.learning_rate'?"});
}

TEST(ConfigCli, MisspelledKeyInSet) {
  TempDir dir;
  const CliRun run =
      mlm_train(dir, {"--config", shipped("tiny"), "--set", "optim.learnig_rate=1e-4"});
  expect_one_line_error(run, {"--set 'optim.learnig_rate=1e-4'",
                              "did you mean 'optim.learning_rate'?"});
}

TEST(ConfigCli, KeyOfAnotherOptimizer) {
  TempDir dir;
  const CliRun run = mlm_train(dir, {"--config", shipped("tiny"), "--set", "optim.type=stable_adamw",
                                     "--set", "optim.weight_decay=1e-5", "--set",
                                     "optim.lamb_adapt_no_decay=true", "--print-config"});
  expect_one_line_error(run, {"optim.lamb_adapt_no_decay (true) applies only to optim.type: lamb",
                              "(from --set 'optim.lamb_adapt_no_decay=true')"});
}

TEST(ConfigCli, PhaseThatChangesTheArchitecture) {
  TempDir dir;
  const auto path = dir.write("phased.yaml", "phases:\n  - name: short\n    steps: 10\n  - name: wide\n"
                                             "    steps: 10\n    set: {model.hidden_size: 1024}\n");
  expect_one_line_error(mlm_train(dir, {"--config", path, "--print-config"}),
                        {path, "phases[1].set.model.hidden_size", "cannot change between phases"});
  const CliRun from_set = mlm_train(dir, {"--config", shipped("base"), "--set",
                                          "phases=[{name: a, steps: 5, set: {tokenizer.vocab_size: 9}}]",
                                          "--print-config"});
  expect_one_line_error(from_set, {"phases[0].set.tokenizer.vocab_size", "the tokenizer is the run's"});
}

TEST(ConfigCli, MissingFile) {
  TempDir dir;
  const auto path = (dir.path() / "missing.yaml").string();
  expect_one_line_error(mlm_train(dir, {"--config", path}), {path, "no such config file"});
}

TEST(ConfigCli, Directory) {
  TempDir dir;
  expect_one_line_error(mlm_train(dir, {"--config", dir.path().string()}),
                        {dir.path().string(), "is a directory"});
}

TEST(ConfigCli, EmptyFile) {
  TempDir dir;
  const auto path = dir.write("empty.yaml", "");
  expect_one_line_error(mlm_train(dir, {"--config", path}), {path, "config is empty"});
}

TEST(ConfigCli, SyntaxErrorHasLineAndColumn) {
  TempDir dir;
  const auto path = dir.write("bad.yaml", "model:\n  hidden_size: [768\ntrain:\n  max_steps: 1\n");
  expect_one_line_error(mlm_train(dir, {"--config", path}), {path + ":3:", "YAML syntax error"});
}

TEST(ConfigCli, ListInsteadOfMap) {
  TempDir dir;
  const auto top = dir.write("list.yaml", "- model\n- train\n");
  expect_one_line_error(mlm_train(dir, {"--config", top}),
                        {top + ":1: expected a map of sections", "got a list"});
  const auto section = dir.write("section.yaml", "model:\n  - hidden_size: 768\n");
  expect_one_line_error(mlm_train(dir, {"--config", section}),
                        {section + ":1: model: expected a map of keys", "got a list"});
}

TEST(ConfigCli, TrainingNeedsTrainFiles) {
  TempDir dir;
  const CliRun run = mlm_train(dir, {"--config", shipped("tiny"), "--set", "data.train_files=[]"});
  expect_one_line_error(run, {"data.train_files is empty"});
}

TEST(ConfigCli, MissingConfigOptionIsAUsageError) {
  TempDir dir;
  const CliRun run = mlm_train(dir, {"--print-config"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--config"), std::string::npos) << run.err;
}

TEST(ConfigCli, HelpListsTheOptions) {
  TempDir dir;
  const CliRun run = mlm_train(dir, {"--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* option : {"--config", "--set", "--print-config", "--resume", "--version"}) {
    EXPECT_NE(run.out.find(option), std::string::npos) << option << " missing from\n" << run.out;
  }
}

// Every executable names the LibTorch and CUDA it was built with: the versions of the torch
// package CMake took LibTorch from (MLM_PYTHON), asked independently of the build.
TEST(ConfigCli, VersionNamesTheLibTorchAndCudaOfTheBuild) {
  TempDir dir;
  const std::string versions_file = (dir.path() / "versions.txt").string();
  const std::string cmd = std::string(MLM_PYTHON) +
                          " -c \"import torch; print(torch.__version__.split('+')[0]); "
                          "print(torch.version.cuda or 'none')\" > " + versions_file;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::istringstream versions(testing::slurp(versions_file));
  std::string torch_version, cuda_version;
  versions >> torch_version >> cuda_version;
  for (const char* tool : {"mlm-train", "mlm-eval", "mlm-export", "mlm-fill", "mlm-finetune", "mlm-bench"}) {
    const CliRun run = run_tool(tool, dir, {"--version"}, false);
    EXPECT_EQ(run.exit_code, 0) << tool << ": " << run.err;
    EXPECT_NE(run.out.find(std::string(tool) + " "), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("LibTorch " + torch_version + ","), std::string::npos)
        << tool << ": " << run.out << " (torch " << torch_version << ")";
    // "CUDA 13.0.88" for the toolkit of torch's CUDA 13.0; "CUDA none" for a CPU LibTorch.
    EXPECT_NE(run.out.find("CUDA " + cuda_version), std::string::npos)
        << tool << ": " << run.out << " (torch's CUDA " << cuda_version << ")";
  }
  // The data tools link no LibTorch (tests/build/no_libtorch_test.sh), and say so.
  for (const char* tool : {"mlm-tokenizer", "mlm-data"}) {
    const CliRun run = run_tool(tool, dir, {"--version"}, false);
    EXPECT_EQ(run.exit_code, 0) << tool << ": " << run.err;
    EXPECT_EQ(run.out, std::string(tool) + " " + MLM_VERSION + " (no LibTorch)\n") << tool;
  }
}

}  // namespace
}  // namespace mlm::cli

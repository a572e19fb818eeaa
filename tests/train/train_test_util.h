#pragma once
// Shared by the trainer tests: the tiny config on the fixture corpus in a fresh directory,
// the same settings as `--set` arguments for the binaries, and a small process runner.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/config/config_loader.h"
#include "mlm/test_paths.h"

namespace mlm::train::testing {

namespace fs = std::filesystem;

/// A fresh, empty directory for one test.
inline fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(MLM_BINARY_DIR) / "test-train" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// --set overrides of configs/tiny.yaml for a run in `out_dir`: absolute fixture paths, one
/// shared tokenizer (trained by the first test that needs it), one thread, a log row per step.
inline std::vector<std::string> tiny_overrides(const fs::path& out_dir,
                                               std::vector<std::string> extra = {}) {
  const std::string corpus = std::string(MLM_FIXTURES_DIR) + "/corpus/";
  std::vector<std::string> sets = {
      "train.output_dir=" + out_dir.string(),
      "tokenizer.model=" + std::string(MLM_BINARY_DIR) + "/test-train/spm_tiny.model",
      // The fixture corpus supports only ~230 unigram pieces; tiny.yaml asks for 1000.
      "tokenizer.vocab_size=200",
      "data.train_files=[" + corpus + "train.txt]",
      "data.valid_files=[" + corpus + "valid.txt]",
      "train.threads=1",
      "logging.every_steps=1",
      "logging.progress_bar=off",
  };
  sets.insert(sets.end(), extra.begin(), extra.end());
  return sets;
}

inline config::RunConfig tiny_config(const fs::path& out_dir, std::vector<std::string> extra = {}) {
  return config::load_config(std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                             tiny_overrides(out_dir, std::move(extra)));
}

/// argv for an mlm-* binary with --config tiny.yaml and the overrides as --set arguments.
inline std::vector<std::string> tiny_command(const std::string& tool,
                                             const std::vector<std::string>& overrides) {
  std::vector<std::string> argv = {std::string(MLM_BINARY_DIR) + "/" + tool, "--config",
                                   std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  for (const auto& set : overrides) {
    argv.push_back("--set");
    argv.push_back(set);
  }
  return argv;
}

/// Starts argv[0] with its stdout and stderr redirected to files and `env` set in the child;
/// returns the pid.
inline pid_t spawn(const std::vector<std::string>& argv, const fs::path& stdout_path,
                   const fs::path& stderr_path,
                   const std::vector<std::pair<std::string, std::string>>& env = {}) {
  const pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    FILE* out = std::freopen(stdout_path.c_str(), "w", stdout);
    FILE* err = std::freopen(stderr_path.c_str(), "w", stderr);
    (void)out;
    (void)err;
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

/// Exit status of a child (128 + signal when it was killed by one).
inline int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// metrics.jsonl rows (train rows have "loss", eval rows "eval_loss").
inline std::vector<nlohmann::json> read_metrics(const fs::path& run_dir) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(run_dir / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    auto row = nlohmann::json::parse(line, nullptr, false);
    if (row.is_object()) rows.push_back(row);
  }
  return rows;
}

}  // namespace mlm::train::testing

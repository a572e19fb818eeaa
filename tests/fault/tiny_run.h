#pragma once
// A short mlm-train run of configs/tiny.yaml in a scratch directory, driven from outside:
// the command line, its metrics, its checkpoints and its final weights.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fault_util.h"

namespace mlm::fault {

/// A trained tiny tokenizer shared by every test of the suite (trained once, then cached in
/// the build directory), so each run does not train its own.
std::string shared_tiny_tokenizer();

struct TinyRun {
  fs::path root;                     // run directory is root/run
  std::vector<std::string> settings; // --set arguments besides the defaults below
  std::string tool = "train";        // mlm-<tool>: train, or train-poisoned (NaN gradients)

  /// tiny.yaml with the run and tokenizer redirected, one intra-op thread (bitwise
  /// reproducible), a metrics row per step and no evaluation before the end.
  explicit TinyRun(fs::path root, std::vector<std::string> settings = {});

  fs::path run_dir() const { return root / "run"; }
  fs::path checkpoints() const { return run_dir() / "checkpoints"; }
  fs::path checkpoint(int64_t step) const;

  ChildOptions command(const std::vector<std::string>& extra_args = {},
                       double timeout_s = 180) const;
  ChildResult run(const std::vector<std::string>& extra_args = {},
                  const std::vector<std::pair<std::string, std::string>>& env = {},
                  double timeout_s = 180) const;
};

struct Metrics {
  std::map<int64_t, nlohmann::json> train;  // train rows by step
  std::map<int64_t, nlohmann::json> eval;   // eval rows by step
  std::vector<std::string> bad_lines;       // lines that are not JSON objects
};
Metrics read_metrics(const fs::path& run_dir);

/// The highest step with a train row in metrics.jsonl (0 when none yet); tolerates a file
/// being written.
int64_t last_logged_step(const fs::path& run_dir);

/// Names of the complete checkpoint directories (verified like the trainer does).
std::vector<std::string> complete_checkpoints(const fs::path& checkpoints_dir);

/// Empty when the two model.pt files hold the same names with bit-equal tensors, else the
/// first difference.
std::string compare_weights(const fs::path& a, const fs::path& b);

/// Empty when both runs logged the same train rows (step, tokens, loss, accuracy, lr, grad
/// norm: bit-equal) for every step of `want`, else the first difference.
std::string compare_train_rows(const Metrics& want, const Metrics& got);

}  // namespace mlm::fault

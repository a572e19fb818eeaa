#pragma once
// metrics.jsonl in the run directory: one JSON object per line, train rows (step, tokens,
// loss, mlm_accuracy, lr, grad_norm, tokens_per_s, ...) and eval rows (eval_* keys), flushed
// after each row so a killed run keeps what it logged.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

namespace mlm::train {

class MetricsLog {
 public:
  /// Opens `path` for appending. With `resume_step`, rows of a step after it (written by the
  /// interrupted run after its last checkpoint) are dropped first, so the file reads as one
  /// run; without it the file starts empty.
  MetricsLog(const std::filesystem::path& path, std::optional<int64_t> resume_step);

  void write(const nlohmann::json& row);

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace mlm::train

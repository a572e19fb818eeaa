#pragma once
// logging.tensorboard: the scalars of metrics.jsonl also as a TensorBoard event file in the
// run directory (events.out.tfevents.mlm-train), for `tensorboard --logdir runs/`. Train rows
// become train/<key>, evaluation rows eval/<key>, probe rows probe/<task>/<key>; strings (the
// phase, the probe's metric name) stay in metrics.jsonl alone.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "mlm/train/run/event_file.h"

namespace mlm::train {

/// The TensorBoard scalars of one metrics.jsonl row, at its "step".
std::vector<Scalar> row_scalars(const nlohmann::json& row);

class TensorBoardLog {
 public:
  /// Opens the event file in `dir`. With `resume_step`, the events of steps after it (logged
  /// by the interrupted run after its last checkpoint) are dropped first, as MetricsLog drops
  /// its rows, so every reader sees one run; without it the file starts anew.
  TensorBoardLog(const std::filesystem::path& dir, std::optional<int64_t> resume_step);

  /// Appends the row's scalars as one event, flushed.
  void write(const nlohmann::json& row);

  static constexpr const char* kFileName = "events.out.tfevents.mlm-train";

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace mlm::train

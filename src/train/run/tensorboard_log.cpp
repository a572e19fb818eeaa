#include "mlm/train/run/tensorboard_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "mlm/util/atomic_file.h"
#include "mlm/util/logging.h"

namespace mlm::train {
namespace {

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<Scalar> row_scalars(const nlohmann::json& row) {
  std::vector<Scalar> scalars;
  const bool probe = row.contains("probe") && row["probe"].is_string();
  const bool eval = !probe && row.contains("eval_loss");
  for (const auto& [key, value] : row.items()) {
    if (!value.is_number() || key == "step") continue;
    std::string tag;
    if (probe) {
      if (!key.starts_with("probe_")) continue;
      tag = "probe/" + row["probe"].get<std::string>() + "/" + key.substr(6);
    } else if (eval) {
      if (!key.starts_with("eval_")) continue;
      tag = "eval/" + key.substr(5);
    } else {
      tag = "train/" + key;
    }
    scalars.push_back({tag, value.get<float>()});
  }
  return scalars;
}

TensorBoardLog::TensorBoardLog(const std::filesystem::path& dir, std::optional<int64_t> resume_step)
    : path_(dir / kFileName) {
  std::string kept = framed_record(version_event(wall_time()));
  if (resume_step) {
    size_t dropped = 0;
    for (const auto& record : read_records(path_)) {
      if (event_step(record) == 0) continue;  // the old version event: ours replaces it
      if (event_step(record) <= *resume_step) {
        kept += framed_record(record);
      } else {
        ++dropped;
      }
    }
    if (dropped > 0) {
      log::info("train", "{}: dropped {} events logged after step {} by the interrupted run",
                path_.string(), dropped, *resume_step);
    }
  }
  write_file_atomically(path_, kept);
  out_.open(path_, std::ios::binary | std::ios::app);
  if (!out_) throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
}

void TensorBoardLog::write(const nlohmann::json& row) {
  if (!row.contains("step") || !row["step"].is_number_integer()) return;
  const auto scalars = row_scalars(row);
  if (scalars.empty()) return;
  out_ << framed_record(scalars_event(wall_time(), row["step"].get<int64_t>(), scalars));
  out_.flush();
}

}  // namespace mlm::train

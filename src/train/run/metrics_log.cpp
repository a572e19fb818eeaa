#include "mlm/train/run/metrics_log.h"

#include <cerrno>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {

MetricsLog::MetricsLog(const std::filesystem::path& path, std::optional<int64_t> resume_step)
    : path_(path) {
  std::vector<std::string> kept;
  if (resume_step && std::filesystem::exists(path)) {
    std::ifstream in(path);
    std::string line;
    size_t dropped = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      // A torn last line (killed mid-write) is not JSON: drop it with the later rows.
      const auto row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (row.is_object() && row.contains("step") && row["step"].is_number_integer() &&
          row["step"].get<int64_t>() <= *resume_step) {
        kept.push_back(line);
      } else {
        ++dropped;
      }
    }
    if (dropped > 0) {
      log::info("train", "{}: dropped {} rows logged after step {} by the interrupted run",
                path.string(), dropped, *resume_step);
    }
  }
  out_.open(path, std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  for (const auto& line : kept) out_ << line << '\n';
  out_.flush();
}

void MetricsLog::write(const nlohmann::json& row) {
  out_ << row.dump() << '\n';
  out_.flush();
  if (!out_) throw std::runtime_error("cannot write " + path_.string() + ": " + std::strerror(errno));
}

}  // namespace mlm::train

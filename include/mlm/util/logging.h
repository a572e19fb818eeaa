#pragma once
// The one logging header: spdlog behind tagged helpers, so messages read
// "[data] skipped 3 invalid UTF-8 bytes in a.txt" and the back end can change in one place.
#include <spdlog/spdlog.h>

#include <string>

namespace mlm::log {

/// Sets the level from a name (trace, debug, info, warn, error, off); MLM_LOG_LEVEL wins
/// when set. Unknown names throw ConfigError naming `key`.
void set_level(const std::string& level, const std::string& key = "logging.level");

/// Only rank 0 logs at info and below in a multi-process run.
void set_rank(int rank);

template <typename... Args>
void info(const char* area, fmt::format_string<Args...> format, Args&&... args) {
  spdlog::info("[{}] {}", area, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(const char* area, fmt::format_string<Args...> format, Args&&... args) {
  spdlog::warn("[{}] {}", area, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(const char* area, fmt::format_string<Args...> format, Args&&... args) {
  spdlog::error("[{}] {}", area, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(const char* area, fmt::format_string<Args...> format, Args&&... args) {
  spdlog::debug("[{}] {}", area, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace mlm::log

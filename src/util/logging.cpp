#include "mlm/util/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

#include "mlm/util/errors.h"

namespace mlm::log {
namespace {

std::shared_ptr<spdlog::logger> make_stderr_logger() {
  auto logger = spdlog::stderr_color_mt("mlm");
  logger->set_pattern("%Y-%m-%d %H:%M:%S %^%l%$ %v");
  return logger;
}

}  // namespace

void set_level(const std::string& level, const std::string& key) {
  static const bool installed = [] {
    spdlog::set_default_logger(make_stderr_logger());
    return true;
  }();
  (void)installed;
  std::string name = level;
  if (const char* env = std::getenv("MLM_LOG_LEVEL"); env && *env) name = env;
  const auto parsed = spdlog::level::from_str(name);
  if (parsed == spdlog::level::off && name != "off") {
    throw ConfigError(key + ": unknown log level '" + name +
                          "' (valid: trace, debug, info, warn, error, off)",
                      key);
  }
  spdlog::set_level(parsed);
}

void set_rank(int rank) {
  if (rank != 0 && spdlog::get_level() < spdlog::level::warn) spdlog::set_level(spdlog::level::warn);
}

}  // namespace mlm::log

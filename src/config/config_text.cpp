#include "config_text.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "mlm/util/errors.h"
#include "mlm/util/utf8_decode.h"

namespace mlm::config::detail {
namespace {

// Far above any real config (a few KiB); stops a mistaken --config on a corpus early.
constexpr std::uintmax_t kMaxConfigBytes = 4u << 20;

std::string hex_byte(unsigned char byte) {
  static const char* const kHex = "0123456789abcdef";
  return std::string("0x") + kHex[byte >> 4] + kHex[byte & 15];
}

}  // namespace

std::string read_config_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  const auto status = fs::status(path, error);
  if (status.type() == fs::file_type::not_found) {
    throw ConfigError(path + ": no such config file");
  }
  if (error) throw ConfigError(path + ": cannot access config file: " + error.message());
  if (fs::is_directory(status)) {
    throw ConfigError(path + ": is a directory, expected a YAML config file");
  }
  if (fs::is_regular_file(status)) {
    const auto size = fs::file_size(path, error);
    if (!error && size > kMaxConfigBytes) {
      throw ConfigError(path + ": " + std::to_string(size) +
                        " bytes is too large for a config file (the limit is " +
                        std::to_string(kMaxConfigBytes) + ")");
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open config file: " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes) {  // a pipe or device has no size up front
      throw ConfigError(path + ": too large for a config file (over " +
                        std::to_string(kMaxConfigBytes) + " bytes)");
    }
  }
  if (in.bad()) throw ConfigError(path + ": error reading config file: " + std::strerror(errno));
  return text;
}

void check_config_text(const std::string& text, const std::string& origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw ConfigError(origin + ": config is empty; expected sections such as 'model:' and "
                               "'train:' (see configs/base.yaml)");
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    throw ConfigError(origin + ": binary data (a NUL byte at offset " + std::to_string(nul) +
                      "), expected a YAML text file");
  }
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      throw ConfigError(origin + ": not UTF-8 text (byte " +
                        hex_byte(static_cast<unsigned char>(text[i])) + " at offset " +
                        std::to_string(i) + "), expected a YAML text file");
    }
    i += length;
  }
}

}  // namespace mlm::config::detail

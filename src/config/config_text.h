#pragma once
// Reading a config file's bytes and refusing what cannot be YAML text, before the parser
// sees it: a missing path, a directory, an empty, oversized or binary file.
#include <string>

namespace mlm::config::detail {

/// The whole file; ConfigError naming `path` when it is missing, a directory, unreadable
/// or larger than any config could be.
std::string read_config_file(const std::string& path);

/// ConfigError naming `origin` and the byte offset when `text` holds a NUL byte or is not
/// valid UTF-8, and when it is empty or only white space.
void check_config_text(const std::string& text, const std::string& origin);

}  // namespace mlm::config::detail

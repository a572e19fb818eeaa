#pragma once
// Keys that were renamed. The old spelling is read as the new key (same value, same unit), so
// existing configs and the config.yaml dumped into older runs, checkpoints and saved models
// still load; the dump writes the new name.
#include <string>
#include <string_view>
#include <vector>

namespace mlm::config::detail {

struct RenamedKey {
  std::string_view old_key;  // "section.key", no longer declared by any section
  std::string_view new_key;  // "section.key", as the section's visit() declares it
};

/// Every renamed key, oldest first.
const std::vector<RenamedKey>& renamed_keys();

/// `dotted` under its current name: the new key for an old one, else `dotted` itself.
std::string current_key(const std::string& dotted);

/// The old names (without their section) the key `section.name` may still be written as.
std::vector<std::string> old_names_of(const std::string& section, const std::string& name);

}  // namespace mlm::config::detail

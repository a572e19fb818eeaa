#include "renamed_keys.h"

namespace mlm::config::detail {

const std::vector<RenamedKey>& renamed_keys() {
  static const std::vector<RenamedKey> keys = {
      // It counts ICU match-engine steps (in units of 10,000), not time.
      {"tokenizer.regex_time_limit", "tokenizer.regex_step_limit"},
  };
  return keys;
}

std::string current_key(const std::string& dotted) {
  for (const auto& renamed : renamed_keys()) {
    if (renamed.old_key == dotted) return std::string(renamed.new_key);
  }
  return dotted;
}

std::vector<std::string> old_names_of(const std::string& section, const std::string& name) {
  const std::string dotted = section + "." + name;
  std::vector<std::string> names;
  for (const auto& renamed : renamed_keys()) {
    if (renamed.new_key == dotted) {
      names.emplace_back(renamed.old_key.substr(renamed.old_key.find('.') + 1));
    }
  }
  return names;
}

}  // namespace mlm::config::detail

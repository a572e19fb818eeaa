#pragma once
// The set of sections and dotted keys, read off RunConfig::visit() so that no list of keys
// is ever written by hand.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mlm/config/run_config.h"

namespace mlm::config::detail {

struct ConfigSchema {
  std::vector<std::string> sections;                      // declaration order
  std::vector<std::string> keys;                          // "section.key", declaration order
  std::map<std::string, std::set<std::string>> fields;    // section -> its field names

  bool has_section(const std::string& name) const { return fields.count(name) > 0; }
  bool has_key(const std::string& section, const std::string& field) const {
    auto it = fields.find(section);
    return it != fields.end() && it->second.count(field) > 0;
  }
};

/// Built once from a default RunConfig.
const ConfigSchema& config_schema();

}  // namespace mlm::config::detail

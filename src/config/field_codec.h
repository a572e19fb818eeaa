#pragma once
// One YAML node <-> one typed config field. The loader, the dumper and the validation
// messages share these, so a value prints the way it parses ("1e-12" stays bit-equal).
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/config/sections/phases.h"

namespace mlm::config::detail {

/// A node of the wrong type or spelling; the message reads "expected an integer, got 'abc'"
/// and the loader prefixes it with the file, line and dotted key. Inside a list of maps
/// (struct_list.h) it also says where below the key ("[1].weight") and at which node.
class FieldTypeError : public std::runtime_error {
 public:
  explicit FieldTypeError(const std::string& message, std::string path = {},
                          YAML::Mark mark = YAML::Mark::null_mark())
      : std::runtime_error(message), path_(std::move(path)), mark_(mark) {}
  const std::string& path() const { return path_; }  // "" = the key's own value
  const YAML::Mark& mark() const { return mark_; }    // null = the key's own node

 private:
  std::string path_;
  YAML::Mark mark_;
};

/// "'abc'", "a list", "a map", "nothing": how an unexpected node is named in messages.
std::string describe(const YAML::Node& node);

void decode(const YAML::Node& node, bool& out);
void decode(const YAML::Node& node, int64_t& out);
void decode(const YAML::Node& node, double& out);
void decode(const YAML::Node& node, std::string& out);
void decode(const YAML::Node& node, std::vector<std::string>& out);
void decode(const YAML::Node& node, std::array<double, 2>& out);
/// A map of dotted keys to values of any shape (a phase's `set:`); the keys are checked
/// where the settings are applied (config/phases.h).
void decode(const YAML::Node& node, KeySettings& out);

/// Nearest valid spelling of an enum, for "did you mean" in messages ("" when none is close).
std::string suggest_enum_name(const std::string& text, const std::vector<std::string>& names);

template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
void decode(const YAML::Node& node, E& out) {
  if (node.IsScalar()) {
    if (auto value = enum_from_string<E>(node.Scalar())) {
      out = *value;
      return;
    }
  }
  std::string message = "expected one of " + enum_choices<E>() + ", got " + describe(node);
  if (node.IsScalar()) {
    const std::vector<std::string> names(EnumNames<E>::names.begin(), EnumNames<E>::names.end());
    if (auto near = suggest_enum_name(node.Scalar(), names); !near.empty()) {
      message += " (did you mean '" + near + "'?)";
    }
  }
  throw FieldTypeError(message);
}

/// Shortest text that parses back bit-equal ("0.1", "1e-4", "768", "nan"): values in messages.
std::string format_number(double value);

/// YAML text of one value, as written by dump_config.
std::string encode(bool value);
std::string encode(int64_t value);
/// Shortest text that parses back bit-equal; always reads as a float in YAML 1.1 and 1.2
/// ("1.0e-12", not "1e-12", which PyYAML would take for a string).
std::string encode(double value);
/// Plain when unambiguous, otherwise double-quoted with escapes.
std::string encode(const std::string& value);
std::string encode(const std::vector<std::string>& value);
std::string encode(const std::array<double, 2>& value);
std::string encode(const KeySettings& value);

/// Quoted when the name is also a YAML 1.1 boolean ("on", "off"), so Python reads a string.
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
std::string encode(E value) {
  return encode(std::string(to_string(value)));
}

}  // namespace mlm::config::detail

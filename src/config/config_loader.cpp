#include "mlm/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "config_schema.h"
#include "config_text.h"
#include "field_codec.h"
#include "key_setting.h"
#include "key_suggest.h"
#include "renamed_keys.h"
#include "struct_list.h"
#include "mlm/config/phases.h"
#include "mlm/config/validate.h"
#include "mlm/util/errors.h"

namespace mlm::config {
namespace {

using detail::config_schema;
using detail::describe;

const std::string kPhasesKey = "phases";

// Where the value of one dotted key came from, so that a later error can point at it.
struct KeySource {
  int line = 0;               // 1-based line in the file, 0 when from --set
  std::string override_text;  // the "--set" argument that set it last, if any
};
using KeySources = std::map<std::string, KeySource>;

std::string at_line(const std::string& origin, const YAML::Node& node) {
  const auto mark = node.Mark();
  return mark.is_null() ? origin : origin + ":" + std::to_string(mark.line + 1);
}

std::string quote_override(const std::string& text) { return "--set '" + text + "'"; }

// ---- structure: a map of known sections, each a map of known keys -------------------------

struct UnknownName {
  std::string dotted;  // "optim.learnig_rate", or a top-level name
  int line;
  bool top_level;
};

std::string unknown_names_message(const std::string& origin,
                                  const std::vector<UnknownName>& unknown) {
  const auto& schema = config_schema();
  const auto entry = [&](const UnknownName& name, bool with_line) {
    const bool is_section = name.top_level;
    std::string text = "'" + name.dotted + "'";
    std::vector<std::string> notes;
    if (with_line) notes.push_back("line " + std::to_string(name.line));
    const auto dot = name.dotted.find('.');
    if (is_section && dot != std::string::npos &&
        schema.has_key(name.dotted.substr(0, dot), name.dotted.substr(dot + 1))) {
      // "optim.learning_rate: 1e-4" at the top level: right key, wrong shape.
      notes.push_back("write it nested, '" + name.dotted.substr(dot + 1) +
                      ":' indented under '" + name.dotted.substr(0, dot) + ":'");
    } else if (const auto near = detail::suggest_key(name.dotted, schema.sections, schema.keys);
               !near.empty()) {
      notes.push_back("did you mean '" + near + "'?");
    }
    if (!notes.empty()) {
      text += " (";
      for (size_t i = 0; i < notes.size(); ++i) text += (i ? ", " : "") + notes[i];
      text += ")";
    }
    return std::make_pair(is_section, text);
  };
  std::string message;
  bool any_section = false;
  if (unknown.size() == 1) {
    auto [is_section, text] = entry(unknown[0], false);
    any_section = is_section;
    message = origin + ":" + std::to_string(unknown[0].line) + ": unknown " +
              (is_section ? "section " : "key ") + text;
  } else {
    message = origin + ": " + std::to_string(unknown.size()) + " unknown keys: ";
    for (size_t i = 0; i < unknown.size(); ++i) {
      auto [is_section, text] = entry(unknown[i], true);
      any_section |= is_section;
      message += (i ? ", " : "") + text;
    }
  }
  if (any_section) {
    message += "; the sections are ";
    for (size_t i = 0; i < schema.sections.size(); ++i) {
      message += (i ? ", " : "") + schema.sections[i];
    }
  }
  return message;
}

// Name of a map key; keys that are lists or maps are refused here.
std::string key_name(const YAML::Node& key, const std::string& origin, const std::string& where) {
  if (!key.IsScalar()) {
    throw ConfigError(at_line(origin, key) + ": " + where + "keys must be plain names, got " +
                      describe(key));
  }
  return key.Scalar();
}

void check_structure(const YAML::Node& root, const std::string& origin, KeySources& sources) {
  const auto& schema = config_schema();
  if (!root.IsMap()) {
    throw ConfigError(at_line(origin, root) +
                      ": expected a map of sections (model:, data:, optim:, train:, ...) at the "
                      "top level, got " + describe(root));
  }
  std::vector<UnknownName> unknown;
  std::map<std::string, int> section_lines;
  for (const auto& entry : root) {
    const std::string section = key_name(entry.first, origin, "");
    const int line = entry.first.Mark().line + 1;
    if (auto [it, fresh] = section_lines.emplace(section, line); !fresh) {
      throw ConfigError(origin + ":" + std::to_string(line) + ": section '" + section +
                            "' appears twice (first at line " + std::to_string(it->second) +
                            "); merge the two",
                        section);
    }
    if (section == kPhasesKey) continue;  // a list, read by read_phases()
    if (!schema.has_section(section)) {
      unknown.push_back({section, line, true});
      continue;
    }
    const YAML::Node& body = entry.second;
    if (body.IsNull()) continue;  // "model:" with nothing under it keeps the defaults
    if (!body.IsMap()) {
      throw ConfigError(origin + ":" + std::to_string(line) + ": " + section +
                            ": expected a map of keys (key: value lines indented under '" +
                            section + ":'), got " + describe(body),
                        section);
    }
    for (const auto& field : body) {
      const std::string written = section + "." + key_name(field.first, origin, section + ": ");
      const std::string dotted = detail::current_key(written);  // an old name counts as the new
      const int field_line = field.first.Mark().line + 1;
      if (auto it = sources.find(dotted); it != sources.end()) {
        throw ConfigError(origin + ":" + std::to_string(field_line) + ": " + dotted +
                              " is set twice (first at line " + std::to_string(it->second.line) +
                              (written != dotted ? ", here as its old name " + written : "") + ")",
                          dotted);
      }
      if (!schema.has_key(section, dotted.substr(section.size() + 1))) {
        unknown.push_back({dotted, field_line, false});
        continue;
      }
      sources[dotted] = KeySource{field_line, {}};
    }
  }
  if (!unknown.empty()) {
    throw ConfigError(unknown_names_message(origin, unknown), unknown.front().dotted);
  }
}

// ---- phases: the one top-level list ---------------------------------------------------------

void read_phases(const YAML::Node& root, const std::string& origin, RunConfig& config) {
  const YAML::Node node = root[kPhasesKey];
  if (!node.IsDefined()) return;
  try {
    detail::decode(node, config.phases);
  } catch (const detail::FieldTypeError& e) {
    const std::string where = e.mark().is_null() ? at_line(origin, node)
                                                 : origin + ":" + std::to_string(e.mark().line + 1);
    throw ConfigError(where + ": " + kPhasesKey + e.path() + ": " + e.what(), kPhasesKey + e.path());
  }
}

// ---- typed read, driven by RunConfig::visit ------------------------------------------------

class SectionReader {
 public:
  SectionReader(const YAML::Node& body, std::string section, std::string location,
                bool from_override)
      : body_(body),
        section_(std::move(section)),
        location_(std::move(location)),
        from_override_(from_override) {}

  template <class T>
  void operator()(const char* name, T& field) {
    const YAML::Node node = written_node(name);
    if (!node.IsDefined()) return;
    const std::string dotted = section_ + "." + name;
    try {
      detail::decode(node, field);
    } catch (const detail::FieldTypeError& e) {
      // Inside a list of maps the error names the entry's field ("data.sources[1].weight")
      // and its line.
      std::string where = location_;
      if (!from_override_) {
        where = e.mark().is_null() ? at_line(location_, node)
                                   : location_ + ":" + std::to_string(e.mark().line + 1);
      }
      throw ConfigError(where + ": " + dotted + e.path() + ": " + e.what(), dotted);
    }
  }

 private:
  // The key's node under its name or, failing that, under an old name (check_structure has
  // refused a section that holds both).
  YAML::Node written_node(const std::string& name) const {
    YAML::Node node = body_[name];
    if (node.IsDefined()) return node;
    for (const auto& old_name : detail::old_names_of(section_, name)) {
      YAML::Node old = body_[old_name];
      if (old.IsDefined()) return old;
    }
    return node;
  }

  const YAML::Node& body_;
  std::string section_;
  std::string location_;  // the file name, or the "--set '...'" argument
  bool from_override_;
};

// Reads every section present in `root` (already checked by check_structure or built from
// one override) into `config`.
struct ConfigReader {
  const YAML::Node& root;
  std::string location;  // the file name, or the "--set '...'" argument
  bool from_override = false;

  template <class Section>
  void section(const char* name, Section& section) {
    const YAML::Node body = root[name];
    if (!body.IsDefined() || !body.IsMap()) return;
    SectionReader reader(body, name, location, from_override);
    section.visit(reader);
  }
};

// ---- --set section.key=value ---------------------------------------------------------------

void apply_override(const std::string& text, RunConfig& config, KeySources& sources) {
  const auto equals = text.find('=');
  const auto usage = quote_override(text) +
                     ": expected section.key=value, e.g. --set optim.learning_rate=3e-4";
  if (equals == std::string::npos) throw ConfigError(usage);
  std::string key = text.substr(0, equals);
  const auto first = key.find_first_not_of(" \t");
  const auto last = key.find_last_not_of(" \t");
  key = first == std::string::npos ? "" : key.substr(first, last - first + 1);
  if (key == kPhasesKey) {  // the one top-level key that is not a section: --set phases=[]
    YAML::Node root;
    try {
      root[kPhasesKey] = YAML::Load(text.substr(equals + 1));
    } catch (const YAML::Exception& e) {
      throw ConfigError(quote_override(text) + ": the value is not valid YAML (" + e.msg + ")", key);
    }
    config.phases.clear();
    read_phases(root, quote_override(text), config);
    sources[key] = KeySource{0, text};
    return;
  }
  if (key.empty() || key.find('.') == std::string::npos) throw ConfigError(usage, key);
  detail::apply_key_setting(config, key, text.substr(equals + 1), quote_override(text));
  sources[detail::current_key(key)] = KeySource{0, text};
}

// ---- pointing validation errors at the YAML line -------------------------------------------

// The message gains the line of the first key it names that the file or a --set gave.
std::string locate(const ConfigError& error, const std::string& origin,
                   const KeySources& sources) {
  std::vector<std::string> named = {error.key()};
  const std::string message = error.what();
  std::vector<std::pair<size_t, std::string>> mentioned;
  for (const auto& key : config_schema().keys) {
    for (auto at = message.find(key); at != std::string::npos; at = message.find(key, at + 1)) {
      const size_t end = at + key.size();
      const bool whole = end == message.size() ||
                         !(std::isalnum(static_cast<unsigned char>(message[end])) ||
                           message[end] == '_');
      if (whole) {
        mentioned.emplace_back(at, key);
        break;
      }
    }
  }
  std::sort(mentioned.begin(), mentioned.end());
  for (const auto& [at, key] : mentioned) named.push_back(key);
  for (const auto& key : named) {
    auto it = sources.find(key);
    if (it == sources.end()) continue;
    if (!it->second.override_text.empty()) {
      return origin + ": " + message + " (from " + quote_override(it->second.override_text) + ")";
    }
    return origin + ":" + std::to_string(it->second.line) + ": " + message;
  }
  return origin + ": " + message;
}

// 1-based line of a '---' marker that starts a second document, or 0. Found by scanning
// rather than with YAML::LoadAll, which loops forever on some malformed input (a leading ',').
size_t second_document_line(const std::string& yaml) {
  bool seen_content = false;
  size_t line_number = 0;
  size_t start = 0;
  while (start <= yaml.size()) {
    size_t end = yaml.find('\n', start);
    if (end == std::string::npos) end = yaml.size();
    const std::string_view line(yaml.data() + start, end - start);
    ++line_number;
    const bool marker = line.substr(0, 3) == "---" && (line.size() == 3 || line[3] == ' ' ||
                                                       line[3] == '\t' || line[3] == '\r');
    if (marker && seen_content) return line_number;
    const auto first = line.find_first_not_of(" \t\r");
    if (!marker && first != std::string_view::npos && line[first] != '#' &&
        line.substr(0, 3) != "...") {
      seen_content = true;
    }
    start = end + 1;
  }
  return 0;
}

YAML::Node parse_document(const std::string& yaml, const std::string& origin) {
  YAML::Node document;
  // yaml-cpp reports an unclosed quote ("illegal EOF in scalar") only when the text does not
  // end in a newline; otherwise it silently swallows the rest of the file into the string.
  std::string_view text = yaml;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  try {
    document = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    std::string where = origin;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    throw ConfigError(where + ": YAML syntax error: " + e.msg);
  }
  if (const size_t line = second_document_line(yaml)) {
    throw ConfigError(origin + ":" + std::to_string(line) +
                      ": holds more than one YAML document (separated by '---'); a config is "
                      "one document");
  }
  if (document.IsNull()) {
    throw ConfigError(origin + ": config has no settings (only comments); expected sections "
                               "such as 'model:' and 'train:' (see configs/base.yaml)");
  }
  return document;
}

}  // namespace

namespace detail {

void apply_key_setting(RunConfig& config, const std::string& written_key,
                       const std::string& value_text, const std::string& location) {
  const auto& schema = config_schema();
  const std::string key = current_key(written_key);  // an old name sets the new key
  const auto dot = key.find('.');
  const std::string section = dot == std::string::npos ? key : key.substr(0, dot);
  const std::string name = dot == std::string::npos ? "" : key.substr(dot + 1);
  if (!schema.has_key(section, name)) {
    std::string message = location + ": unknown key '" + key + "'";
    if (auto near = suggest_key(key, schema.sections, schema.keys); !near.empty()) {
      message += " (did you mean '" + near + "'?)";
    }
    throw ConfigError(message, key);
  }
  YAML::Node value;
  try {
    value = YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(location + ": the value is not valid YAML (" + e.msg +
                          "); quote it, e.g. --set '" + key + "=\"...\"'",
                      key);
  }
  YAML::Node root;
  root[section][name] = value;
  ConfigReader reader{root, location, true};
  config.visit(reader);
}

}  // namespace detail

RunConfig load_config_from_string(const std::string& yaml, const std::string& origin,
                                  const std::vector<std::string>& overrides) {
  detail::check_config_text(yaml, origin);
  const YAML::Node root = parse_document(yaml, origin);
  KeySources sources;
  check_structure(root, origin, sources);

  RunConfig config;
  ConfigReader reader{root, origin, false};
  config.visit(reader);
  read_phases(root, origin, config);
  for (const auto& text : overrides) apply_override(text, config, sources);

  try {
    validate_config(config);
  } catch (const ConfigError& e) {
    throw ConfigError(locate(e, origin, sources), e.key());
  }
  validate_phases(config, origin);
  return config;
}

RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return load_config_from_string(detail::read_config_file(path), path, overrides);
}

}  // namespace mlm::config

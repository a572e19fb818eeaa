#include "field_codec.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "key_suggest.h"

namespace mlm::config::detail {
namespace {

constexpr size_t kMaxShownChars = 60;

// Locale-independent parse of the whole text; nullopt when it is not a number at all.
std::optional<double> parse_double(const std::string& text) {
  if (text.empty()) return std::nullopt;
  // YAML's own spellings of the non-finite values.
  static const char* const kInf[] = {".inf", ".Inf", ".INF"};
  static const char* const kNan[] = {".nan", ".NaN", ".NAN"};
  const bool negative = text[0] == '-';
  const std::string body = (text[0] == '-' || text[0] == '+') ? text.substr(1) : text;
  for (const char* spelling : kInf) {
    if (body == spelling) return negative ? -HUGE_VAL : HUGE_VAL;
  }
  for (const char* spelling : kNan) {
    if (body == spelling) return std::nan("");
  }
  if (body.empty() || body[0] == '-' || body[0] == '+') return std::nullopt;
  double value = 0;
  const char* first = text.data() + (text.size() - body.size());
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(first, last, value);
  if (end != last) return std::nullopt;
  if (error == std::errc::result_out_of_range) {
    // from_chars leaves the value unset; the magnitude decides which way it fell.
    return std::nullopt;
  }
  if (error != std::errc()) return std::nullopt;
  return negative ? -value : value;
}

bool is_yaml_keyword(const std::string& text) {
  static const char* const kWords[] = {"true", "false", "yes", "no", "on",   "off",
                                       "y",    "n",     "null", "~",  "none"};
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : kWords) {
    if (lower == word) return true;
  }
  return false;
}

bool is_plain_safe(const std::string& text) {
  if (text.empty() || is_yaml_keyword(text)) return false;
  const auto first = static_cast<unsigned char>(text[0]);
  if (!(std::isalpha(first) || first == '_' || first == '/')) return false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) continue;
    switch (c) {
      case '_': case '.': case '/': case '-': case '+': case '*': case '?': case '=':
      case '%': case '@': case '~':
        continue;
      default:
        return false;
    }
  }
  return true;
}

std::string yaml_double_quoted(const std::string& text) {
  static const char* const kHex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Scalar: {
      std::string text = node.Scalar();
      if (text.size() > kMaxShownChars) text = text.substr(0, kMaxShownChars) + "...";
      const std::string escaped = yaml_double_quoted(text);  // control characters stay visible
      return "'" + escaped.substr(1, escaped.size() - 2) + "'";
    }
  }
  return "an unknown node";
}

void decode(const YAML::Node& node, bool& out) {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    throw FieldTypeError("expected true or false, got " + describe(node));
  }
  out = value;
}

void decode(const YAML::Node& node, int64_t& out) {
  if (!node.IsScalar()) throw FieldTypeError("expected an integer, got " + describe(node));
  const std::string& text = node.Scalar();
  const size_t skip = (!text.empty() && text[0] == '+') ? 1 : 0;
  int64_t value = 0;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(text.data() + skip, last, value);
  if (end == last && error == std::errc() && !(skip && text.size() > 1 && text[1] == '-')) {
    out = value;
    return;
  }
  if (end == last && error == std::errc::result_out_of_range) {
    throw FieldTypeError("expected an integer in the 64-bit range, got " + describe(node));
  }
  // "1e9" and "2.0e6" are integers too when they are exact.
  if (auto number = parse_double(text)) {
    constexpr double kExactLimit = 9007199254740992.0;  // 2^53
    if (std::isfinite(*number) && std::floor(*number) == *number &&
        std::fabs(*number) <= kExactLimit) {
      out = static_cast<int64_t>(*number);
      return;
    }
  }
  throw FieldTypeError("expected an integer, got " + describe(node));
}

void decode(const YAML::Node& node, double& out) {
  if (!node.IsScalar()) throw FieldTypeError("expected a number, got " + describe(node));
  auto number = parse_double(node.Scalar());
  if (!number) throw FieldTypeError("expected a number, got " + describe(node));
  if (!std::isfinite(*number)) {
    throw FieldTypeError("expected a finite number, got " + describe(node));
  }
  out = *number;
}

void decode(const YAML::Node& node, std::string& out) {
  if (node.IsNull()) {
    out.clear();
    return;
  }
  if (!node.IsScalar()) throw FieldTypeError("expected a string, got " + describe(node));
  out = node.Scalar();
}

void decode(const YAML::Node& node, std::vector<std::string>& out) {
  if (node.IsNull()) {
    out.clear();
    return;
  }
  if (node.IsScalar()) {  // a single path needs no brackets
    out = {node.Scalar()};
    return;
  }
  if (!node.IsSequence()) {
    throw FieldTypeError("expected a list of strings, got " + describe(node));
  }
  std::vector<std::string> values;
  for (size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsScalar()) {
      throw FieldTypeError("item " + std::to_string(i + 1) + ": expected a string, got " +
                           describe(node[i]));
    }
    values.push_back(node[i].Scalar());
  }
  out = std::move(values);
}

void decode(const YAML::Node& node, std::array<double, 2>& out) {
  if (!node.IsSequence() || node.size() != 2) {
    std::string got = describe(node);
    if (node.IsSequence()) got = "a list of " + std::to_string(node.size()) + " items";
    throw FieldTypeError("expected a list of 2 numbers such as [0.9, 0.999], got " + got);
  }
  std::array<double, 2> values{};
  for (size_t i = 0; i < 2; ++i) {
    try {
      decode(node[i], values[i]);
    } catch (const FieldTypeError& e) {
      throw FieldTypeError("item " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  out = values;
}

std::string suggest_enum_name(const std::string& text, const std::vector<std::string>& names) {
  return closest_match(text, names);
}

std::string encode(bool value) { return value ? "true" : "false"; }

std::string encode(int64_t value) { return std::to_string(value); }

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);  // shortest
  std::string text(buffer, end);
  // "1e-04" -> "1e-4": to_chars pads the exponent to two digits.
  if (const auto exponent = text.find('e'); exponent != std::string::npos) {
    const size_t digits = exponent + 2;  // after 'e' and its sign
    if (text.size() > digits + 1 && text[digits] == '0') text.erase(digits, 1);
  }
  return text;
}

std::string encode(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  std::string text = format_number(value);
  // A dot keeps the text a float for every YAML reader ("300.0", "1.0e-12").
  if (text.find('.') == std::string::npos) {
    const auto exponent = text.find('e');
    if (exponent == std::string::npos) {
      text += ".0";
    } else {
      text.insert(exponent, ".0");
    }
  }
  return text;
}

std::string encode(const std::string& value) {
  return is_plain_safe(value) ? value : yaml_double_quoted(value);
}

std::string encode(const std::vector<std::string>& value) {
  std::string out = "[";
  for (size_t i = 0; i < value.size(); ++i) {
    if (i) out += ", ";
    out += encode(value[i]);
  }
  return out + "]";
}

std::string encode(const std::array<double, 2>& value) {
  return "[" + encode(value[0]) + ", " + encode(value[1]) + "]";
}

namespace {

// One value as flow-style YAML text ("512", "[a.txt, b.txt]", "{files: [a], weight: 0.7}"):
// what a KeySettings entry keeps, parsed again when the setting is applied.
std::string flow_text(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

}  // namespace

void decode(const YAML::Node& node, KeySettings& out) {
  if (node.IsNull()) {
    out.entries.clear();
    return;
  }
  if (!node.IsMap()) {
    throw FieldTypeError("expected a map of dotted keys to values (data.seq_len: 512), got " +
                         describe(node));
  }
  KeySettings settings;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      throw FieldTypeError("keys must be dotted names such as data.seq_len, got " +
                               describe(entry.first),
                           "", entry.first.Mark());
    }
    const std::string key = entry.first.Scalar();
    for (const auto& [seen, value] : settings.entries) {
      if (seen == key) throw FieldTypeError("is set twice", "." + key, entry.first.Mark());
    }
    settings.entries.emplace_back(key, flow_text(entry.second));
  }
  out = std::move(settings);
}

std::string encode(const KeySettings& value) {
  std::string out = "{";
  for (size_t i = 0; i < value.entries.size(); ++i) {
    if (i) out += ", ";
    out += encode(value.entries[i].first) + ": " + value.entries[i].second;
  }
  return out + "}";
}

}  // namespace mlm::config::detail

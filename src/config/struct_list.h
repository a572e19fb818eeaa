#pragma once
// Config fields that are lists of small maps, such as data.sources:
//   sources: [{files: [a/*.txt], weight: 0.7}, {store: prepared/b, weight: 0.3}]
// Each entry is read field by field through its struct's visit(), with the same codec as a
// section's keys; an entry's unknown keys are all refused, each with its path below the key
// ("[1].wieght") and a "did you mean". The dump writes the list as one flow-style line, so the
// dump keeps one line per key and loads back bit for bit.
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "field_codec.h"
#include "key_suggest.h"

namespace mlm::config::detail {

/// A struct's field names, in visit() order.
struct StructFieldNames {
  std::vector<std::string> names;
  template <class F>
  void operator()(const char* name, F&) {
    names.push_back(name);
  }
};

/// A config struct that can be an entry of a list field: it names its fields with visit().
template <class T>
concept ConfigStruct =
    std::is_class_v<T> && requires(T& entry, StructFieldNames& names) { entry.visit(names); };

template <ConfigStruct T>
std::vector<std::string> struct_field_names() {
  T entry{};
  StructFieldNames collector;
  entry.visit(collector);
  return collector.names;
}

/// "[2]": an entry's place in its list, counted from 0.
inline std::string list_index(size_t i) {
  std::string out = "[";  // appended, not "[" + ...: GCC 12 warns falsely (-Wrestrict) there
  out += std::to_string(i);
  out += ']';
  return out;
}

inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

/// Decodes the fields present in one entry; an error gains the field's path and node.
struct StructEntryReader {
  const YAML::Node& entry;
  std::string path;  // "[1]"

  template <class F>
  void operator()(const char* name, F& field) {
    const YAML::Node node = entry[name];
    if (!node.IsDefined()) return;
    try {
      decode(node, field);
    } catch (const FieldTypeError& e) {
      throw FieldTypeError(e.what(), path + "." + name + e.path(),
                           e.mark().is_null() ? node.Mark() : e.mark());
    }
  }
};

template <ConfigStruct T>
void decode(const YAML::Node& node, std::vector<T>& out) {
  const std::vector<std::string> names = struct_field_names<T>();
  const std::string shape = "a map with keys " + joined(names);
  if (node.IsNull()) {  // "sources:" with nothing: no entries
    out.clear();
    return;
  }
  if (!node.IsSequence()) {
    throw FieldTypeError("expected a list, each entry " + shape + ", got " + describe(node));
  }
  // Every entry's keys first, so that all unknown keys are named in one error.
  std::vector<std::string> unknown;
  YAML::Mark first_unknown = YAML::Mark::null_mark();
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node entry = node[i];
    if (!entry.IsMap()) {
      throw FieldTypeError("expected " + shape + ", got " + describe(entry), list_index(i),
                           entry.Mark());
    }
    std::set<std::string> seen;
    for (const auto& field : entry) {
      if (!field.first.IsScalar()) {
        throw FieldTypeError("keys must be plain names, got " + describe(field.first),
                             list_index(i), field.first.Mark());
      }
      const std::string& name = field.first.Scalar();
      if (!seen.insert(name).second) {
        throw FieldTypeError("is set twice in one entry", list_index(i) + "." + name,
                             field.first.Mark());
      }
      bool known = false;
      for (const auto& candidate : names) known |= candidate == name;
      if (known) continue;
      std::string text = list_index(i) + "." + name;
      if (const auto near = closest_match(name, names); !near.empty()) {
        text += " (did you mean '" + near + "'?)";
      }
      unknown.push_back(text);
      if (first_unknown.is_null()) first_unknown = field.first.Mark();
    }
  }
  if (unknown.size() == 1) {
    const auto space = unknown[0].find(' ');
    throw FieldTypeError("unknown key" + (space == std::string::npos ? "" : unknown[0].substr(space)) +
                             "; an entry is " + shape,
                         unknown[0].substr(0, space), first_unknown);
  }
  if (!unknown.empty()) {
    throw FieldTypeError(std::to_string(unknown.size()) + " unknown keys " + joined(unknown) +
                             "; an entry is " + shape,
                         "", first_unknown);
  }
  std::vector<T> values;
  for (size_t i = 0; i < node.size(); ++i) {
    T value{};
    const YAML::Node entry = node[i];
    StructEntryReader reader{entry, list_index(i)};
    value.visit(reader);
    values.push_back(std::move(value));
  }
  out = std::move(values);
}

/// "files: [a.txt], weight: 0.7, store: \"\"": one entry's fields, flow style.
struct StructEntryWriter {
  std::string out;
  template <class F>
  void operator()(const char* name, F& value) {
    if (!out.empty()) out += ", ";
    out += name;
    out += ": ";
    out += encode(value);
  }
};

template <ConfigStruct T>
std::string encode(const std::vector<T>& value) {
  std::string out = "[";
  for (size_t i = 0; i < value.size(); ++i) {
    T entry = value[i];  // visit() is non-const: it also drives the reader
    StructEntryWriter writer;
    entry.visit(writer);
    out += (i ? ", {" : "{") + writer.out + "}";
  }
  return out + "]";
}

}  // namespace mlm::config::detail

#include "json_reader.h"

#include "mlm/util/errors.h"

namespace mlm::text::hf {

void JsonReader::fail(const std::string& message, const std::string& sub) const {
  const std::string key = sub.empty() ? key_ : child_key(sub);
  throw DataError("tokenizer '" + *origin_ + "': " + (key.empty() ? "" : key + ": ") + message);
}

std::string JsonReader::child_key(const std::string& name) const {
  return key_.empty() ? name : key_ + "." + name;
}

bool JsonReader::has(const char* name) const {
  return value_->is_object() && value_->contains(name) && !(*value_)[name].is_null();
}

const nlohmann::json& JsonReader::member(const char* name, const char* expected) const {
  if (!value_->is_object()) fail(std::string("expected an object, got ") + value_->type_name());
  if (!has(name)) fail(std::string("missing (expected ") + expected + ")", name);
  return (*value_)[name];
}

JsonReader JsonReader::at(const char* name) const {
  return JsonReader(member(name, "a value"), child_key(name), origin_);
}

std::vector<JsonReader> JsonReader::array(const char* name) const {
  const auto& list = member(name, "an array");
  if (!list.is_array()) fail(std::string("expected an array, got ") + list.type_name(), name);
  std::vector<JsonReader> out;
  for (size_t i = 0; i < list.size(); ++i) {
    out.push_back(JsonReader(list[i], child_key(name) + "[" + std::to_string(i) + "]", origin_));
  }
  return out;
}

std::string JsonReader::string(const char* name) const {
  const auto& v = member(name, "a string");
  if (!v.is_string()) fail(std::string("expected a string, got ") + v.dump(), name);
  return v.get<std::string>();
}

std::string JsonReader::string_or(const char* name, const std::string& fallback) const {
  return has(name) ? string(name) : fallback;
}

std::optional<std::string> JsonReader::optional_string(const char* name) const {
  if (!has(name)) return std::nullopt;
  return string(name);
}

bool JsonReader::boolean_or(const char* name, bool fallback) const {
  return optional_boolean(name).value_or(fallback);
}

std::optional<bool> JsonReader::optional_boolean(const char* name) const {
  if (!has(name)) return std::nullopt;
  const auto& v = (*value_)[name];
  if (!v.is_boolean()) fail("expected true or false, got " + v.dump(), name);
  return v.get<bool>();
}

int64_t JsonReader::integer(const char* name) const {
  const auto& v = member(name, "an integer");
  if (!v.is_number_integer()) fail("expected an integer, got " + v.dump(), name);
  return v.get<int64_t>();
}

double JsonReader::number_or(const char* name, double fallback) const {
  if (!has(name)) return fallback;
  const auto& v = (*value_)[name];
  if (!v.is_number()) fail("expected a number, got " + v.dump(), name);
  return v.get<double>();
}

}  // namespace mlm::text::hf

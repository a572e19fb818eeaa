#pragma once
// Reading one object of a tokenizer.json with errors that name the file and the JSON key:
//   tokenizer 'dir/tokenizer.json': pre_tokenizer.pretokenizers[1].type: 'Foo' is not supported
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mlm::text::hf {

class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string key, const std::string& origin)
      : value_(&value), key_(std::move(key)), origin_(&origin) {}

  const nlohmann::json& json() const { return *value_; }
  const std::string& key() const { return key_; }
  const std::string& origin() const { return *origin_; }

  /// DataError: "tokenizer '<origin>': <key>[.<sub>]: <message>".
  [[noreturn]] void fail(const std::string& message, const std::string& sub = {}) const;

  /// The key is present and not null.
  bool has(const char* name) const;
  /// A required member (DataError when absent or null).
  JsonReader at(const char* name) const;
  /// The elements of a required array member.
  std::vector<JsonReader> array(const char* name) const;

  std::string string(const char* name) const;
  std::string string_or(const char* name, const std::string& fallback) const;
  std::optional<std::string> optional_string(const char* name) const;
  bool boolean_or(const char* name, bool fallback) const;
  std::optional<bool> optional_boolean(const char* name) const;
  int64_t integer(const char* name) const;
  double number_or(const char* name, double fallback) const;
  /// The "type" member.
  std::string type() const { return string("type"); }

 private:
  JsonReader(const nlohmann::json& value, std::string key, const std::string* origin)
      : value_(&value), key_(std::move(key)), origin_(origin) {}
  std::string child_key(const std::string& name) const;
  const nlohmann::json& member(const char* name, const char* expected) const;

  const nlohmann::json* value_;
  std::string key_;
  const std::string* origin_;
};

}  // namespace mlm::text::hf

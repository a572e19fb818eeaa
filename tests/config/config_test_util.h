#pragma once
// Helpers for config tests: expect a ConfigError whose message holds given pieces, write
// temporary YAML files, and compare two configs field by field (doubles bit for bit).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "mlm/config/config_loader.h"
#include "mlm/config/run_config.h"
#include "mlm/util/errors.h"

namespace mlm::config::testing {

/// Success when `body` throws ConfigError whose message contains every piece of `parts`,
/// is one line, and whose key() is `key` (skipped when `key` is "*").
inline ::testing::AssertionResult throws_config_error(const std::function<void()>& body,
                                                      const std::string& key,
                                                      const std::vector<std::string>& parts) {
  try {
    body();
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    for (const auto& part : parts) {
      if (message.find(part) == std::string::npos) {
        return ::testing::AssertionFailure()
               << "message lacks \"" << part << "\"; message: " << message;
      }
    }
    if (message.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "message spans lines: " << message;
    }
    if (key != "*" && e.key() != key) {
      return ::testing::AssertionFailure()
             << "key() is '" << e.key() << "', expected '" << key << "'; message: " << message;
    }
    return ::testing::AssertionSuccess() << message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << "threw something other than ConfigError: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception thrown";
}

/// EXPECT that `statement` throws a ConfigError with key() == key and every piece in the
/// message.
#define EXPECT_CONFIG_ERROR(statement, key, ...)                                             \
  EXPECT_TRUE(::mlm::config::testing::throws_config_error([&] { statement; }, key,           \
                                                          {__VA_ARGS__}))

/// The message of the ConfigError `body` throws ("" and a test failure when none).
inline std::string config_error_message(const std::function<void()>& body) {
  try {
    body();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConfigError thrown";
  return {};
}

/// A fresh directory under the test temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("mlm_config_") + info->test_suite_name() + "_" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = std::filesystem::path(::testing::TempDir()) / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

  /// Writes `content` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto file = path_ / name;
    std::ofstream out(file, std::ios::binary);
    out << content;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

/// Collects "section.key=value" for every field, doubles as their bit pattern.
struct FingerprintCollector {
  std::vector<std::string> out;
  std::string section_name;

  template <class S>
  void section(const char* name, S& section) {
    section_name = name;
    section.visit(*this);
  }
  static std::string bits(double value) {
    uint64_t raw = 0;
    std::memcpy(&raw, &value, sizeof(raw));
    return "0x" + std::to_string(raw);
  }
  void add(const char* name, const std::string& value) {
    out.push_back(section_name + "." + name + "=" + value);
  }
  void operator()(const char* name, bool& v) { add(name, v ? "true" : "false"); }
  void operator()(const char* name, int64_t& v) { add(name, std::to_string(v)); }
  void operator()(const char* name, double& v) { add(name, bits(v)); }
  void operator()(const char* name, std::string& v) { add(name, "<" + v + ">"); }
  void operator()(const char* name, std::vector<std::string>& v) {
    std::string text = std::to_string(v.size()) + ":";
    for (const auto& item : v) text += "<" + item + ">";
    add(name, text);
  }
  void operator()(const char* name, std::array<double, 2>& v) {
    add(name, bits(v[0]) + "," + bits(v[1]));
  }
  void operator()(const char* name, std::vector<SourceConfig>& v) {
    std::string text = std::to_string(v.size()) + ":";
    for (auto& source : v) {
      text += "{" + std::to_string(source.files.size()) + ":";
      for (const auto& file : source.files) text += "<" + file + ">";
      text += "," + bits(source.weight) + ",<" + source.store + ">,<" + source.name + ">}";
    }
    add(name, text);
  }
  void operator()(const char* name, KeySettings& v) {
    std::string text = std::to_string(v.entries.size()) + ":";
    for (const auto& [key, value] : v.entries) text += "<" + key + "=" + value + ">";
    add(name, text);
  }
  template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
  void operator()(const char* name, E& v) {
    add(name, std::string(to_string(v)));
  }
};

/// Two configs with the same fingerprint are equal bit for bit.
inline std::vector<std::string> fingerprint(RunConfig config) {
  FingerprintCollector collector;
  config.visit(collector);
  return collector.out;
}

}  // namespace mlm::config::testing

#pragma once
// The checks a config value passes, each failure a ConfigError naming the dotted key, the value
// and what would be valid ("model.hidden_size (0) must be >= 1"). Shared by config/validate.cpp
// and each architecture's keys (model/<arch>/<arch>_keys.cpp).
#include <cstdint>
#include <string>

namespace mlm::config::checks {

/// A value as messages print it: the shortest text that parses back bit-equal ("0.1", "768").
std::string number(double value);
std::string number(int64_t value);

/// Throws ConfigError "key (value) rule", naming `key`.
[[noreturn]] void fail(const std::string& key, const std::string& value, const std::string& rule);

void at_least(const std::string& key, int64_t value, int64_t minimum, const std::string& why = {});
void positive(const std::string& key, double value, const std::string& why = {});
void non_negative(const std::string& key, double value, const std::string& why = {});

enum class End { closed, open };

/// value in [low, high], either end open; NaN never passes.
void in_range(const std::string& key, double value, double low, End low_end, double high, End high_end,
              const std::string& why = {});

}  // namespace mlm::config::checks

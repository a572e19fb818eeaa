#include "mlm/config/value_checks.h"

#include "field_codec.h"
#include "mlm/util/errors.h"

namespace mlm::config::checks {

std::string number(double value) { return detail::format_number(value); }
std::string number(int64_t value) { return std::to_string(value); }

void fail(const std::string& key, const std::string& value, const std::string& rule) {
  throw ConfigError(key + " (" + value + ") " + rule, key);
}

void at_least(const std::string& key, int64_t value, int64_t minimum, const std::string& why) {
  if (value < minimum) fail(key, number(value), "must be >= " + number(minimum) + why);
}

void positive(const std::string& key, double value, const std::string& why) {
  if (!(value > 0)) fail(key, number(value), "must be > 0" + why);
}

void non_negative(const std::string& key, double value, const std::string& why) {
  if (!(value >= 0)) fail(key, number(value), "must be >= 0" + why);
}

void in_range(const std::string& key, double value, double low, End low_end, double high, End high_end,
              const std::string& why) {
  const bool above = low_end == End::open ? value > low : value >= low;
  const bool below = high_end == End::open ? value < high : value <= high;
  if (!(above && below)) {
    fail(key, number(value),
         std::string("must be in ") + (low_end == End::open ? "(" : "[") + number(low) + ", " + number(high) +
             (high_end == End::open ? ")" : "]") + why);
  }
}

}  // namespace mlm::config::checks

#pragma once
// What the user watches: one log line every logging.every_steps and, when stderr is a
// terminal, a single progress line rewritten in place between them.
#include <cstdint>
#include <string>

#include "mlm/config/enums.h"

namespace mlm::train {

/// "1h02m03s", "4m05s", "12s".
std::string format_duration(double seconds);

/// "12.3k", "1.05M": token counts and rates.
std::string format_count(double value);

class ProgressLine {
 public:
  /// enabled: draw at all (logging.progress_bar on, or auto and stderr is a tty).
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { clear(); }

  /// Rewrites the line (at most ~10 times a second).
  void update(const std::string& text);
  /// Erases it, so a log line can be printed; the next update draws it again.
  void clear();

  bool enabled() const { return enabled_; }

 private:
  bool enabled_;
  bool drawn_ = false;
  double last_draw_s_ = -1;
};

/// logging.progress_bar resolved: auto = stderr is a terminal.
bool progress_bar_wanted(config::ProgressBar setting);

}  // namespace mlm::train

#include "mlm/train/run/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace mlm::train {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long h = total / 3600, m = (total % 3600) / 60, s = total % 60;
  char out[48];
  if (h > 0) {
    std::snprintf(out, sizeof(out), "%lldh%02lldm%02llds", h, m, s);
  } else if (m > 0) {
    std::snprintf(out, sizeof(out), "%lldm%02llds", m, s);
  } else {
    std::snprintf(out, sizeof(out), "%llds", s);
  }
  return out;
}

std::string format_count(double value) {
  char out[32];
  if (value >= 1e9) {
    std::snprintf(out, sizeof(out), "%.3gG", value / 1e9);
  } else if (value >= 1e6) {
    std::snprintf(out, sizeof(out), "%.3gM", value / 1e6);
  } else if (value >= 1e3) {
    std::snprintf(out, sizeof(out), "%.3gk", value / 1e3);
  } else {
    std::snprintf(out, sizeof(out), "%.3g", value);
  }
  return out;
}

void ProgressLine::update(const std::string& text) {
  if (!enabled_) return;
  const double now = now_s();
  if (drawn_ && now - last_draw_s_ < 0.1) return;
  last_draw_s_ = now;
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

bool progress_bar_wanted(config::ProgressBar setting) {
  switch (setting) {
    case config::ProgressBar::on:
      return true;
    case config::ProgressBar::off:
      return false;
    case config::ProgressBar::auto_detect:
      break;
  }
  return ::isatty(STDERR_FILENO) == 1;
}

}  // namespace mlm::train

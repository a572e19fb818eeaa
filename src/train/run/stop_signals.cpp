#include "mlm/train/run/stop_signals.h"

#include <csignal>

namespace mlm::train {
namespace {

volatile std::sig_atomic_t g_pending = 0;
struct sigaction g_previous_int;
struct sigaction g_previous_term;

extern "C" void on_stop_signal(int sig) {
  if (g_pending == sig) {
    // Second time: stop waiting for the step boundary.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  if (g_pending == 0) g_pending = sig;
}

}  // namespace

StopSignals::StopSignals() {
  // Before the handlers exist a signal kills the process, so nothing pending can be lost.
  g_pending = 0;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

int StopSignals::pending() { return g_pending; }

}  // namespace mlm::train

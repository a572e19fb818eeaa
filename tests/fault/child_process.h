#pragma once
// Running the real mlm-* executables from a test, as a user or a job scheduler would: with a
// timeout, resource limits, extra environment, and the ability to kill them mid-run. Output
// goes to files (no pipes to drain), the exit status keeps "exited with N" apart from
// "killed by signal S", and wait4() reports the child's peak RSS.
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mlm::fault {

struct ChildOptions {
  std::vector<std::string> argv;                          // argv[0] is the executable path
  std::vector<std::pair<std::string, std::string>> env;   // added to (or replacing) ours
  std::string cwd;                                        // empty = the test's own
  double timeout_s = 120;                                 // then SIGKILL, timed_out = true
  int64_t file_size_limit = -1;                           // RLIMIT_FSIZE in bytes (-1 = none)
  int64_t address_space_limit = -1;                       // RLIMIT_AS in bytes (-1 = none):
                                                          // a runaway child cannot take the
                                                          // machine's memory
};

struct ChildResult {
  int exit_code = -1;       // when the child exited normally, else -1
  int term_signal = 0;      // the signal that ended it, 0 when it exited
  bool timed_out = false;   // killed by us after timeout_s
  bool core_dumped = false;
  std::string out, err;     // everything it wrote to stdout / stderr
  int64_t max_rss_kb = 0;   // peak resident set size (wait4's ru_maxrss)
  double wall_s = 0;

  /// "exit 2" / "signal 9 (core dumped)" / "timed out": for assertion messages.
  std::string status() const;
  /// stderr split into lines, the empty last one dropped.
  std::vector<std::string> err_lines() const;
};

/// A started child; the destructor kills (SIGKILL) and reaps it when still running.
class Child {
 public:
  explicit Child(const ChildOptions& options);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  /// Sends `signal` (no-op once reaped).
  void kill(int signal);
  /// Waits for the end (or the timeout) and collects the result.
  ChildResult wait();
  /// Polls `ready` every few milliseconds until it returns true (true), the child ends or
  /// `timeout_s` passes (false).
  bool wait_until(const std::function<bool()>& ready, double timeout_s);

 private:
  void reap(int status, const ::rusage& usage);

  ChildOptions options_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string out_path_, err_path_;
  std::chrono::steady_clock::time_point start_;
  ChildResult result_;
};

/// Starts, waits, returns.
ChildResult run_child(const ChildOptions& options);

/// Resident set size of a running process in KiB (VmRSS of /proc/<pid>/status), 0 if gone.
int64_t current_rss_kb(pid_t pid);
/// Number of open file descriptors of a running process (/proc/<pid>/fd), -1 if gone.
int open_fd_count(pid_t pid);

}  // namespace mlm::fault

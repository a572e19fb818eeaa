#pragma once
// Multi-process tests without a launcher: the test binary starts N copies of itself
// (/proc/self/exe) with the torchrun variables set for a free loopback port; each copy runs
// the named scenario as one rank, in a global test environment before any test, and exits
// (multi_rank.cpp). A scenario fails its rank through the usual EXPECT_*/ASSERT_* (or an
// exception), which makes that rank exit 1.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mlm/dist/dist_env.h"

namespace mlm::dist::testing {

/// Registers a scenario by name at static-initialization time (see MLM_DIST_SCENARIO).
bool register_scenario(const std::string& name, std::function<void(const DistEnv&)> body);

#define MLM_DIST_SCENARIO(name)                                                          \
  static void mlm_dist_scenario_##name(const ::mlm::dist::DistEnv& env);                \
  static const bool mlm_dist_scenario_registered_##name =                                \
      ::mlm::dist::testing::register_scenario(#name, &mlm_dist_scenario_##name);        \
  static void mlm_dist_scenario_##name(const ::mlm::dist::DistEnv& env)

/// Runs the scenario named by MLM_DIST_SCENARIO in this process (a rank's entry point).
void run_scenario_from_environment();

struct RankResult {
  int exit_code = -1;       // when it exited normally
  int signal = 0;           // when a signal ended it
  bool was_stopped = false;  // it stopped itself (SIGSTOP) and the launcher killed it
  bool timed_out = false;    // still running at the deadline: killed
  double end_s = 0;          // seconds from launch until it exited, stopped or was killed
  std::string output;        // its stdout and stderr
  std::string summary() const;  // "rank exited 1 after 2.1 s" + output, for failure messages
};

struct LaunchOptions {
  int world_size = 2;
  double timeout_s = 10;      // distributed.timeout_s inside the ranks (MLM_DIST_TIMEOUT_S)
  double deadline_s = 60;     // the launcher kills whatever still runs after this
  std::map<std::string, std::string> env;  // extra variables (override the defaults)
  bool start_store = false;   // host a TCPStore here, as the torchrun agent does
};

/// Starts the ranks, waits for all of them, returns one result per rank.
std::vector<RankResult> run_ranks(const std::string& scenario, const LaunchOptions& options);

/// Any command, for the end-to-end tests: argv[0] is the executable's path.
struct ProcessSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // on top of this process's (torchrun ones removed)
  std::string cwd;                         // empty: this process's
};

/// Starts every process at once and waits until all have ended (or `deadline_s` passed:
/// then they are killed). `on_poll(seconds, pids)`, called every few milliseconds with the
/// pids of those still running (-1 once ended), may signal them. A process that stops
/// itself stays stopped until all others have ended.
std::vector<RankResult> run_processes(
    const std::vector<ProcessSpec>& specs, double deadline_s,
    const std::function<void(double, const std::vector<int>&)>& on_poll = {});

/// A TCP port on 127.0.0.1 that was free a moment ago.
int free_port();

/// The distributed.timeout_s a scenario should use (MLM_DIST_TIMEOUT_S).
double scenario_timeout_s();

}  // namespace mlm::dist::testing

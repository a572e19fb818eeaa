#include "dist/multi_rank.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace mlm::dist::testing {
namespace {

std::map<std::string, std::function<void(const DistEnv&)>>& scenarios() {
  static std::map<std::string, std::function<void(const DistEnv&)>> table;
  return table;
}

std::string self_exe() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(path, static_cast<size_t>(n));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The launcher's environment minus anything a rank must not inherit (torchrun variables
// of an outer launch, gtest's XML output, which every rank would overwrite).
std::map<std::string, std::string> base_environment() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                           "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE",
                           "TORCHELASTIC_RESTART_COUNT", "GTEST_OUTPUT", "XML_OUTPUT_FILE",
                           "GTEST_SHARD_INDEX", "GTEST_TOTAL_SHARDS"}) {
    vars.erase(name);
  }
  vars["OMP_NUM_THREADS"] = "1";  // ranks share two cores with everything else
  return vars;
}

}  // namespace

bool register_scenario(const std::string& name, std::function<void(const DistEnv&)> body) {
  scenarios()[name] = std::move(body);
  return true;
}

double scenario_timeout_s() {
  const char* value = std::getenv("MLM_DIST_TIMEOUT_S");
  return value ? std::stod(value) : 10.0;
}

void run_scenario_from_environment() {
  const char* name = std::getenv("MLM_DIST_SCENARIO");
  ASSERT_NE(name, nullptr);
  auto it = scenarios().find(name);
  ASSERT_NE(it, scenarios().end()) << "no scenario named " << name;
  it->second(DistEnv::from_environment());
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a free port on 127.0.0.1");
  }
  const int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string RankResult::summary() const {
  std::string how = timed_out     ? "was still running at the deadline"
                    : was_stopped ? "stopped itself"
                    : signal != 0 ? fmt::format("was killed by signal {}", signal)
                                  : fmt::format("exited {}", exit_code);
  return fmt::format("rank {} after {:.2f} s; its output:\n{}", how, end_s, output);
}

std::vector<RankResult> run_processes(
    const std::vector<ProcessSpec>& specs, double deadline_s,
    const std::function<void(double, const std::vector<int>&)>& on_poll) {
  using Clock = std::chrono::steady_clock;
  const int n = static_cast<int>(specs.size());
  std::vector<pid_t> pids(n, -1);
  std::vector<std::string> logs(n);
  std::vector<RankResult> results(n);
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto vars = base_environment();
    for (const auto& [key, value] : specs[i].env) vars[key] = value;
    // Everything exec needs is built before fork: the child only dup2s, chdirs and execs.
    std::vector<std::string> entries;
    for (const auto& [key, value] : vars) entries.push_back(key + "=" + value);
    std::vector<char*> envp;
    for (auto& e : entries) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = specs[i].argv;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string cwd = specs[i].cwd;
    char log_template[] = "/tmp/mlm_dist_rank_XXXXXX";
    const int log_fd = mkstemp(log_template);
    if (log_fd < 0) throw std::runtime_error("mkstemp failed");
    logs[i] = log_template;

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(log_fd);
    pids[i] = pid;
  }

  int running = n;
  while (running > 0) {
    const double now_s = std::chrono::duration<double>(Clock::now() - start).count();
    for (int i = 0; i < n; ++i) {
      if (pids[i] < 0) continue;
      int status = 0;
      const pid_t got = waitpid(pids[i], &status, WNOHANG | WUNTRACED);
      if (got == 0 && now_s > deadline_s) {
        results[i].timed_out = true;
        results[i].end_s = now_s;
        kill(pids[i], SIGKILL);
        continue;  // reaped on a later pass
      }
      if (got != pids[i]) continue;
      if (WIFSTOPPED(status)) {  // playing "hung": left stopped, see below
        results[i].was_stopped = true;
        results[i].end_s = now_s;
        continue;
      }
      if (!results[i].was_stopped && !results[i].timed_out) results[i].end_s = now_s;
      if (WIFEXITED(status)) results[i].exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) results[i].signal = WTERMSIG(status);
      pids[i] = -1;
      --running;
    }
    // A stopped process stays stopped (its sockets open, like a hung one) until every other
    // process has ended; then it is killed.
    int stopped = 0;
    for (int i = 0; i < n; ++i) stopped += pids[i] >= 0 && results[i].was_stopped;
    if (stopped > 0 && stopped == running) {
      for (int i = 0; i < n; ++i) {
        if (pids[i] >= 0 && results[i].was_stopped) kill(pids[i], SIGKILL);
      }
    }
    if (on_poll && running > 0) on_poll(now_s, std::vector<int>(pids.begin(), pids.end()));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int i = 0; i < n; ++i) {
    results[i].output = read_file(logs[i]);
    std::remove(logs[i].c_str());
  }
  return results;
}

std::vector<RankResult> run_ranks(const std::string& scenario, const LaunchOptions& options) {
  int port = free_port();
  c10::intrusive_ptr<c10d::TCPStore> agent_store;
  if (options.start_store) {  // what torchrun's agent does: it hosts, every rank connects
    c10d::TCPStoreOptions store_options;
    store_options.port = 0;
    store_options.isServer = true;
    store_options.waitWorkers = false;
    store_options.timeout =
        std::chrono::milliseconds(static_cast<int64_t>(options.deadline_s * 1000));
    agent_store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", store_options);
    port = agent_store->getPort();
  }
  std::vector<ProcessSpec> specs;
  const int n = options.world_size;
  for (int rank = 0; rank < n; ++rank) {
    ProcessSpec spec;
    // Any test: the rank's work is done by RankEnvironment before the first one would run.
    spec.argv = {self_exe(), "--gtest_filter=*"};
    spec.env = {{"MLM_DIST_SCENARIO", scenario},
                {"MLM_DIST_TIMEOUT_S", fmt::format("{}", options.timeout_s)},
                {"RANK", std::to_string(rank)},
                {"LOCAL_RANK", std::to_string(rank)},
                {"WORLD_SIZE", std::to_string(n)},
                {"LOCAL_WORLD_SIZE", std::to_string(n)},
                {"MASTER_ADDR", "127.0.0.1"},
                {"MASTER_PORT", std::to_string(port)}};
    for (const auto& [key, value] : options.env) spec.env[key] = value;
    specs.push_back(std::move(spec));
  }
  return run_processes(specs, options.deadline_s);
}

}  // namespace mlm::dist::testing

// The entry point of every rank: a global test environment, set up before any test runs.
// With MLM_DIST_SCENARIO set it runs that scenario and ends the process, exit 1 when an
// EXPECT/ASSERT of the scenario failed or it threw, else 0. Without it (the ordinary test
// run) it does nothing, so there is no rank-only test that would have to skip.
namespace {

class RankEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (std::getenv("MLM_DIST_SCENARIO") == nullptr) return;
    try {
      mlm::dist::testing::run_scenario_from_environment();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "the scenario threw: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "the scenario threw";
    }
    // Failures outside a test are recorded in the ad hoc test result.
    const bool failed = ::testing::UnitTest::GetInstance()->ad_hoc_test_result().Failed();
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(failed ? 1 : 0);
  }
};

::testing::Environment* const kRankEnvironment =
    ::testing::AddGlobalTestEnvironment(new RankEnvironment);

}  // namespace

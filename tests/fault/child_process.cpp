#include "child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace mlm::fault {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string make_temp_file(const char* tag) {
  std::string pattern = (std::filesystem::temp_directory_path() / "mlm_fault_XXXXXX").string();
  pattern += tag;
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = mkstemps(name.data(), static_cast<int>(std::strlen(tag)));
  if (fd < 0) throw std::runtime_error("mkstemps: " + std::string(std::strerror(errno)));
  close(fd);
  return name.data();
}

}  // namespace

std::string ChildResult::status() const {
  if (timed_out) return "timed out";
  if (term_signal != 0) {
    return "signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")" +
           (core_dumped ? " (core dumped)" : "");
  }
  return "exit " + std::to_string(exit_code);
}

std::vector<std::string> ChildResult::err_lines() const {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Child::Child(const ChildOptions& options) : options_(options) {
  if (options_.argv.empty()) throw std::invalid_argument("Child: empty argv");
  out_path_ = make_temp_file(".out");
  err_path_ = make_temp_file(".err");

  // Everything the child needs is prepared before fork(): after it, only async-signal-safe
  // calls are allowed (the test process may have threads).
  std::vector<char*> argv;
  for (auto& arg : options_.argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::map<std::string, std::string> env_map;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env_map[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [key, value] : options_.env) env_map[key] = value;
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : env_map) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const int out_fd = open(out_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  const int err_fd = open(err_path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (out_fd < 0 || err_fd < 0) throw std::runtime_error("cannot open child output files");

  start_ = std::chrono::steady_clock::now();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid_ == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    if (!options_.cwd.empty() && chdir(options_.cwd.c_str()) != 0) _exit(126);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // a crash is reported as a signal, no core file
    if (options_.file_size_limit >= 0) {
      // A full disk makes write() fail with ENOSPC; RLIMIT_FSIZE makes it fail with EFBIG,
      // but only when SIGXFSZ (default action: kill) is ignored. Ignored dispositions
      // survive execve, so the child sees a plain write error, as on a full disk.
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit limit;
      limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(options_.file_size_limit);
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    if (options_.address_space_limit >= 0) {
      struct rlimit limit;
      limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(options_.address_space_limit);
      setrlimit(RLIMIT_AS, &limit);
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  std::error_code ignored;
  std::filesystem::remove(out_path_, ignored);
  std::filesystem::remove(err_path_, ignored);
}

void Child::reap(int status, const ::rusage& usage) {
  reaped_ = true;
  result_.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    result_.term_signal = WTERMSIG(status);
    result_.core_dumped = WCOREDUMP(status);
  }
  result_.max_rss_kb = usage.ru_maxrss;
  result_.out = read_all(out_path_);
  result_.err = read_all(err_path_);
}

bool Child::running() {
  if (reaped_) return false;
  int status = 0;
  struct rusage usage {};
  const pid_t done = wait4(pid_, &status, WNOHANG, &usage);
  if (done == pid_) reap(status, usage);
  return !reaped_;
}

void Child::kill(int signal) {
  if (!reaped_) ::kill(pid_, signal);
}

bool Child::wait_until(const std::function<bool()>& ready, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    if (!running()) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

ChildResult Child::wait() {
  const auto deadline =
      start_ + std::chrono::duration<double>(options_.timeout_s);
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      struct rusage usage {};
      wait4(pid_, &status, 0, &usage);
      reap(status, usage);
      result_.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return result_;
}

ChildResult run_child(const ChildOptions& options) {
  Child child(options);
  return child.wait();
}

int64_t current_rss_kb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoll(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

int open_fd_count(pid_t pid) {
  std::error_code error;
  std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", error);
  if (error) return -1;
  int count = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) return -1;
    ++count;
  }
  return count;
}

}  // namespace mlm::fault

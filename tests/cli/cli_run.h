#pragma once
// Runs an mlm-* executable of this build as a child process and captures what it printed.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_test_util.h"
#include "mlm/test_paths.h"

namespace mlm::cli::testing {

struct CliRun {
  int exit_code = -1;  // -1 when the child did not exit normally (signal)
  std::string out;
  std::string err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// Runs `MLM_BINARY_DIR/<tool>` with `args` (each quoted for the shell), stdout and stderr
/// captured in files of `dir`; with `in_dir` the child starts in `dir`.
inline CliRun run_tool(const std::string& tool, const config::testing::TempDir& dir,
                       const std::vector<std::string>& args, bool in_dir) {
  const std::string out = (dir.path() / "stdout.txt").string();
  const std::string err = (dir.path() / "stderr.txt").string();
  std::string command = in_dir ? "cd " + shell_quote(dir.path().string()) + " && " : "";
  command += shell_quote(std::string(MLM_BINARY_DIR) + "/" + tool);
  for (const auto& arg : args) command += " " + shell_quote(arg);
  command += " >" + shell_quote(out) + " 2>" + shell_quote(err) + " </dev/null";
  const int status = std::system(command.c_str());
  CliRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(out);
  run.err = slurp(err);
  return run;
}

/// stderr without its timestamped info and warning lines (logs of work done before an error):
/// what is left of a refusal should be its one error line.
inline std::vector<std::string> log_free_lines(const std::string& err) {
  static const std::regex kLog(
      R"(^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? (\x1b\[[0-9;]*m)?(info|warning)\b.*)");
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_match(line, kLog)) lines.push_back(line);
  }
  return lines;
}

}  // namespace mlm::cli::testing

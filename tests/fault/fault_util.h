#pragma once
// Shared pieces of the fault suite: where the executables are, scratch directories, file
// helpers, and the one check every bad-input case makes ("a clean failure").
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "child_process.h"
#include "mlm/test_paths.h"

namespace mlm::fault {

namespace fs = std::filesystem;

/// MLM_BINARY_DIR/mlm-<tool>.
std::string tool_path(const std::string& tool);

/// A fresh directory under the temp dir, removed (recursively) by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag = "fault");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& bytes);
std::string read_text(const fs::path& path);

/// Markers of a crash or of an exception that escaped main(): none may reach stderr.
extern const std::vector<std::string> kCrashMarkers;

/// True for a log line of level info, debug or trace ("2026-01-01 12:00:00 info [data] ...").
bool is_progress_log_line(const std::string& line);
/// True for a log line of any level (warnings and errors included).
bool is_log_line(const std::string& line);

/// What may come before the one error line on stderr.
enum class Preceding {
  nothing,        // the error is found before anything runs (a bad config)
  progress_logs,  // info/debug log lines of work done before the error was found
  any_logs,       // log lines of any level, e.g. warnings about skipped steps
};

/// The outcome every bad input must have: the process exited by itself (not by a signal,
/// not by our timeout) with `exit_code`, printed exactly one non-empty stderr line, no crash
/// marker, and that line contains every string of `must_mention` (or one of its alternatives
/// separated by '|'). `preceding` says which log
/// lines may come before it (they are not counted).
::testing::AssertionResult clean_failure(const ChildResult& result, int exit_code,
                                         const std::vector<std::string>& must_mention,
                                         Preceding preceding = Preceding::nothing);

/// Runs `tool` with `args` in `cwd` and returns the result (timeout `timeout_s`).
ChildResult run_tool(const std::string& tool, const std::vector<std::string>& args,
                     const fs::path& cwd, double timeout_s = 120,
                     const std::vector<std::pair<std::string, std::string>>& env = {});

}  // namespace mlm::fault

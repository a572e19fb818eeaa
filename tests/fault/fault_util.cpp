#include "fault_util.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

namespace mlm::fault {

std::string tool_path(const std::string& tool) {
  return std::string(MLM_BINARY_DIR) + "/mlm-" + tool;
}

ScratchDir::ScratchDir(const std::string& tag) {
  std::random_device device;
  const auto base = fs::temp_directory_path();
  for (int attempt = 0;; ++attempt) {
    path_ = base / ("mlm_" + tag + "_" + std::to_string(getpid()) + "_" +
                    std::to_string(device() % 1000000));
    if (fs::create_directories(path_)) break;
    if (attempt > 100) throw std::runtime_error("cannot create a scratch directory");
  }
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  // Tests may have made parts read-only; make them writable again so they can go.
  for (auto it = fs::recursive_directory_iterator(path_, ignored);
       it != fs::recursive_directory_iterator(); it.increment(ignored)) {
    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
  }
  fs::remove_all(path_, ignored);
}

void write_text(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::vector<std::string> kCrashMarkers = {
    "terminate called",       // an exception escaped main()
    "Aborted",                // abort()
    "Segmentation fault",     //
    "Exception raised from",  // c10::Error with its backtrace
    "frame #",                // c10 backtrace frames
    "Traceback",              //
    "AddressSanitizer",       // sanitizer builds
    "runtime error:",         // UBSan
    "Assertion `",            // assert()
    "what():",                //
};

bool is_progress_log_line(const std::string& line) {
  static const std::regex kProgress(
      R"(^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? (\x1b\[[0-9;]*m)?(info|debug|trace)\b.*)");
  return std::regex_match(line, kProgress);
}

bool is_log_line(const std::string& line) {
  static const std::regex kAny(
      R"(^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? (\x1b\[[0-9;]*m)?(trace|debug|info|warning|warn|error|critical)\b.*)");
  return std::regex_match(line, kAny);
}

::testing::AssertionResult clean_failure(const ChildResult& result, int exit_code,
                                         const std::vector<std::string>& must_mention,
                                         Preceding preceding) {
  const auto describe = [&] {
    return "\n  status: " + result.status() + "\n  stderr: <<<" + result.err + ">>>";
  };
  if (result.timed_out || result.term_signal != 0) {
    return ::testing::AssertionFailure() << "ended abnormally" << describe();
  }
  if (result.exit_code != exit_code) {
    return ::testing::AssertionFailure()
           << "expected exit " << exit_code << ", got " << result.status() << describe();
  }
  for (const auto& marker : kCrashMarkers) {
    if (result.err.find(marker) != std::string::npos ||
        result.out.find(marker) != std::string::npos) {
      return ::testing::AssertionFailure() << "crash marker '" << marker << "'" << describe();
    }
  }
  std::vector<std::string> lines;
  for (const auto& line : result.err_lines()) {
    const bool skip = (preceding == Preceding::progress_logs && is_progress_log_line(line)) ||
                      (preceding == Preceding::any_logs && is_log_line(line));
    if (!skip) lines.push_back(line);
  }
  if (lines.size() != 1 || lines[0].empty()) {
    return ::testing::AssertionFailure()
           << "expected exactly one stderr line, got " << lines.size() << describe();
  }
  for (const auto& word : must_mention) {
    bool found = false;
    for (size_t start = 0; start <= word.size();) {
      const size_t bar = std::min(word.find('|', start), word.size());
      found |= lines[0].find(word.substr(start, bar - start)) != std::string::npos;
      start = bar + 1;
    }
    if (!found) {
      return ::testing::AssertionFailure() << "the message does not name '" << word << "'"
                                           << describe();
    }
  }
  return ::testing::AssertionSuccess();
}

ChildResult run_tool(const std::string& tool, const std::vector<std::string>& args,
                     const fs::path& cwd, double timeout_s,
                     const std::vector<std::pair<std::string, std::string>>& env) {
  ChildOptions options;
  options.argv.push_back(tool_path(tool));
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.cwd = cwd.string();
  options.timeout_s = timeout_s;
  options.env = env;
  return run_child(options);
}

}  // namespace mlm::fault

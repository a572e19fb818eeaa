#pragma once
// Library errors: thrown with the file, key or offset; caught once, by run_main
// (src/cli/common/cli_app.cpp), which prints one line and returns the documented exit code.
#include <stdexcept>
#include <string>

namespace mlm {

/// Exit codes shared by every command (docs/ARCHITECTURE.md, "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitRuntimeFailure = 1,
  kExitBadUsage = 2,
  kExitSigint = 130,
  kExitSigterm = 143,
};

/// Bad configuration: names the dotted key (e.g. "model.hidden_size") when there is one.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message, std::string key = {})
      : std::runtime_error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

/// Bad user input that is neither the config nor the corpus: bad usage. Exit code 2.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Corpus that cannot be read or parsed (names file and line or byte offset). Exit code 2,
/// whenever it is detected.
class DataError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A checkpoint or weight file that is missing, truncated or of another shape.
class CheckpointError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs `f`, turning a CheckpointError into a UsageError (exit 2): for model files the user
/// names as input (mlm-eval/mlm-fill/mlm-export --checkpoint, model.init_from), where a damaged
/// or mismatched file is bad input, not a run that failed.
template <class F>
decltype(auto) as_user_input(F&& f) {
  try {
    return f();
  } catch (const CheckpointError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace mlm

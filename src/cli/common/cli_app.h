#pragma once
// What every mlm-* command shares: --version, --config/--set/--print-config, and the single
// place where library errors become one stderr line and a documented exit code. Torch-free
// (library mlm_cli), so that mlm-data and mlm-tokenizer link no LibTorch.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "mlm/config/run_config.h"

namespace mlm::cli {

/// --config F, --set k=v (repeatable), --print-config.
struct ConfigOptions {
  std::string path;
  std::vector<std::string> overrides;
  bool print_config = false;

  void add_to(CLI::App& app);
  /// Loads and validates; with --print-config prints the YAML and returns false.
  bool load(config::RunConfig& out) const;
};

/// Parses the command line with the options `add_options` declares, runs `body` and maps
/// exceptions to exit codes: ConfigError/UsageError/DataError -> 2, anything else -> 1.
/// A null `body` reports "not implemented yet" and exits 1. `runtime` ends the --version
/// line ("mlm-data 0.1.0 (no LibTorch)"): the tools that run on LibTorch pass
/// libtorch_runtime() (cli/common/libtorch_runtime.h, library mlm_cli_torch).
int run_main(const std::string& name, const std::string& description, int argc, char** argv,
             const std::function<void(CLI::App&)>& add_options, const std::function<int()>& body,
             const std::string& runtime = "no LibTorch");

}  // namespace mlm::cli

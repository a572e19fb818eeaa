#pragma once
// What the Hugging Face round-trip tests share: a tiny run on the fixture corpus, its export,
// and tests/reference/hf_client.py (the venv's `transformers`) as the client on the other side.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/test_paths.h"

namespace mlm::cli::testing {

inline std::string fixture_corpus(const std::string& name) {
  return std::string(MLM_FIXTURES_DIR) + "/corpus/" + name;
}

/// configs/tiny.yaml on the fixture corpus with its tokenizer in `dir`; `extra`: more arguments.
inline std::vector<std::string> tiny_args(const config::testing::TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                   "--set", "tokenizer.model=" + (dir.path() / "spm.model").string(),
                                   "--set", "data.train_files=[" + fixture_corpus("train.txt") + "]",
                                   "--set", "data.valid_files=[" + fixture_corpus("valid.txt") + "]",
                                   "--set", "eval.max_batches=3", "--set", "train.threads=1",
                                   "--set", "logging.progress_bar=off"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// A 20-step tiny run; returns its final checkpoint.
inline std::filesystem::path train_tiny(const config::testing::TempDir& dir, const std::string& objective = "mlm") {
  const auto run_dir = dir.path() / ("run_" + objective);
  const CliRun run = run_tool("mlm-train", dir,
                              tiny_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set",
                                              "model.objective=" + objective, "--set", "checkpoint.every_steps=0"}),
                              false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run_dir / "checkpoints" / "step_00000020";
}

/// mlm-export of `model_dir` into dir/name.
inline std::filesystem::path export_to(const config::testing::TempDir& dir, const std::filesystem::path& model_dir,
                                       const std::string& name, const std::string& weights = "safetensors") {
  const auto out = dir.path() / name;
  const CliRun run = run_tool(
      "mlm-export", dir, {"--checkpoint", model_dir.string(), "--output", out.string(), "--weights", weights}, false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return out;
}

/// tests/reference/hf_client.py COMMAND ARGS...: the JSON it prints.
inline nlohmann::json transformers_side(const config::testing::TempDir& dir, const std::vector<std::string>& args) {
  std::string command =
      shell_quote(MLM_PYTHON) + " " + shell_quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py");
  for (const auto& a : args) command += " " + shell_quote(a);
  const auto out = (dir.path() / "py.out").string(), err = (dir.path() / "py.err").string();
  command += " >" + out + " 2>" + err;
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command << "\n" << slurp(err);
  try {
    return nlohmann::json::parse(slurp(out));
  } catch (const std::exception&) {
    ADD_FAILURE() << command << ": no JSON\n" << slurp(err);
    return {};
  }
}

/// mlm-eval --json of `model_dir` with `args` (a config); exit 0 expected.
inline nlohmann::json mlm_eval(const config::testing::TempDir& dir, const std::filesystem::path& model_dir,
                               std::vector<std::string> args) {
  args.insert(args.end(), {"--checkpoint", model_dir.string(), "--json"});
  const CliRun run = run_tool("mlm-eval", dir, args, false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception&) {
    ADD_FAILURE() << "mlm-eval printed no JSON: " << run.err;
    return {};
  }
}

/// Exit 2 and exactly one stderr line holding every piece.
inline void expect_bad_input_line(const CliRun& run, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  for (const auto& piece : pieces) EXPECT_NE(run.err.find(piece), std::string::npos) << piece << " not in " << run.err;
}

}  // namespace mlm::cli::testing

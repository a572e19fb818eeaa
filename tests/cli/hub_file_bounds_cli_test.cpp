// A downloaded model directory whose config.json describes a model no machine holds: the real
// mlm-export refuses it before building anything, exit 2 and one stderr line naming the file,
// the key and the value (not std::bad_alloc, not the machine swapping).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"

// A named namespace: the unity build compiles the cli tests together.
namespace mlm::cli::hub_file_bounds {

namespace fs = std::filesystem;
using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;

TEST(HubFileBoundsCli, ExportRefusesAConfigJsonPastTheMachinesMemory) {
  TempDir dir;
  const fs::path model = dir.path() / "downloaded";
  fs::create_directories(model);
  // 2^30 wide, 16 heads (they divide it): about 2^34 parameters a layer.
  std::ofstream(model / "config.json") << R"({"model_type": "bert", "hidden_size": 1073741824,
      "num_attention_heads": 16, "num_hidden_layers": 12, "intermediate_size": 3072, "vocab_size": 30522})";
  std::ofstream(model / "model.safetensors") << "";  // never reached: config.json is refused first
  const CliRun run = run_tool("mlm-export", dir,
                              {"--checkpoint", model.string(), "--output", (dir.path() / "out").string()},
                              /*in_dir=*/false);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  const auto errors = testing::log_free_lines(run.err);
  ASSERT_EQ(errors.size(), 1u) << run.err;
  EXPECT_NE(errors[0].find((model / "config.json").string()), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("hidden_size 1073741824"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("memory"), std::string::npos) << errors[0];
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

}  // namespace mlm::cli::hub_file_bounds

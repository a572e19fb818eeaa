// The Hugging Face round trip with the real client: `transformers` (the venv's) loads what
// mlm-export writes with no key problems and scores mlm-data's batches as mlm-eval does; a
// model saved by `transformers` (safetensors, .bin, sharded) is read back by mlm-train and
// scored the same; mlm-fill agrees with the fill-mask pipeline; bad directories and damaged
// weight files exit 2 with one line and write nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/test_paths.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::hf_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;
using testing::shell_quote;
using testing::slurp;

std::string fixture(const std::string& name) { return std::string(MLM_FIXTURES_DIR) + "/corpus/" + name; }

// The tiny config on the fixture corpus, its tokenizer in `dir`; `extra` are more --set pairs.
std::vector<std::string> tiny_args(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                   "--set", "tokenizer.model=" + (dir.path() / "spm.model").string(),
                                   "--set", "data.train_files=[" + fixture("train.txt") + "]",
                                   "--set", "data.valid_files=[" + fixture("valid.txt") + "]",
                                   "--set", "eval.max_batches=3", "--set", "train.threads=1",
                                   "--set", "logging.progress_bar=off"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// A 20-step tiny run; returns its final checkpoint.
fs::path train_tiny(const TempDir& dir, const std::string& objective = "mlm") {
  const auto run_dir = dir.path() / ("run_" + objective);
  const CliRun run = run_tool("mlm-train", dir,
                              tiny_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set",
                                              "model.objective=" + objective, "--set", "checkpoint.every_steps=0"}),
                              false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run_dir / "checkpoints" / "step_00000020";
}

fs::path export_to(const TempDir& dir, const fs::path& checkpoint, const std::string& name,
                   const std::string& weights = "safetensors") {
  const auto out = dir.path() / name;
  const CliRun run =
      run_tool("mlm-export", dir, {"--checkpoint", checkpoint.string(), "--output", out.string(), "--weights", weights},
               false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return out;
}

// tests/reference/hf_client.py COMMAND ARGS...: its one JSON line.
nlohmann::json transformers_side(const TempDir& dir, const std::vector<std::string>& args) {
  std::string command = shell_quote(MLM_PYTHON) + " " + shell_quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py");
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

// mlm-data --json: the validation batches mlm-eval scores, written to a file for Python.
std::string valid_batches(const TempDir& dir) {
  const CliRun run = run_tool("mlm-data", dir, tiny_args(dir, {"--split", "valid", "--batches", "3", "--json"}), false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto path = (dir.path() / "batches.jsonl").string();
  std::ofstream(path) << run.out;
  return path;
}

nlohmann::json mlm_eval(const TempDir& dir, const fs::path& model_dir) {
  auto args = tiny_args(dir, {"--checkpoint", model_dir.string(), "--json"});
  const CliRun run = run_tool("mlm-eval", dir, args, false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return nlohmann::json::parse(run.out);
}

void expect_same_scores(const nlohmann::json& ours, const nlohmann::json& theirs) {
  EXPECT_EQ(ours["num_masked"], theirs["num_masked"]);
  const double a = ours["mlm_loss"], b = theirs["mlm_loss"];
  EXPECT_LE(std::abs(a - b), 1e-4 * std::abs(b)) << "mlm-eval " << a << " transformers " << b;
  EXPECT_EQ(ours["masked_accuracy"], theirs["masked_accuracy"]);
}

TEST(HfRoundTrip, TransformersLoadsTheExportAndScoresAsMlmEval) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto bin = export_to(dir, checkpoint, "hf_bin", "bin");
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", hf.string(), bin.string()});
  for (const auto& model_dir : {hf, bin}) {
    SCOPED_TRACE(model_dir.string());
    const auto& problems = loaded[model_dir.string()];
    EXPECT_EQ(problems["class"], "BertForMaskedLM");
    EXPECT_EQ(problems["missing"], nlohmann::json::array());
    EXPECT_EQ(problems["unexpected"], nlohmann::json::array());
    EXPECT_EQ(problems["mismatched"], nlohmann::json::array());
  }
  // Same batches, same numbers: the checkpoint, its export, and transformers on the export.
  const auto batches = valid_batches(dir);
  const auto theirs = transformers_side(dir, {"score", batches, hf.string()})[hf.string()];
  const auto ours = mlm_eval(dir, hf);
  expect_same_scores(ours, theirs);
  expect_same_scores(mlm_eval(dir, checkpoint), theirs);
  expect_same_scores(mlm_eval(dir, bin), theirs);
  std::cout << "mlm-eval loss " << ours["mlm_loss"] << ", transformers loss " << theirs["mlm_loss"] << " over "
            << theirs["num_masked"] << " masked tokens\n";
}

TEST(HfRoundTrip, AnNspExportLoadsAsBertForPreTraining) {
  TempDir dir;
  const auto hf = export_to(dir, train_tiny(dir, "nsp"), "hf");
  const auto loaded = transformers_side(dir, {"load", "BertForPreTraining", hf.string()})[hf.string()];
  EXPECT_EQ(loaded["class"], "BertForPreTraining");
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
}

// A model saved by transformers itself, in each layout the hub uses, read by mlm-train.
TEST(HfRoundTrip, AModelSavedByTransformersScoresTheSameInMlmTrain) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);  // for its tokenizer
  const auto vocab = text::Tokenizer::load((checkpoint / "tokenizer.model").string()).size();
  const auto batches = valid_batches(dir);
  transformers_side(dir, {"save", dir.path().string(), std::to_string(vocab)});
  const std::pair<const char*, const char*> layouts[] = {{"safetensors", "model.safetensors"},
                                                         {"bin", "pytorch_model.bin"},
                                                         {"sharded", "model.safetensors.index.json"},
                                                         {"sharded_bin", "pytorch_model.bin.index.json"}};
  std::vector<std::string> score = {"score", batches};
  for (const auto& [layout, weights_file] : layouts) {
    ASSERT_TRUE(fs::exists(dir.path() / layout / weights_file)) << layout;
    fs::copy_file(checkpoint / "tokenizer.model", dir.path() / layout / "tokenizer.model");
    score.push_back((dir.path() / layout).string());
  }
  const auto theirs = transformers_side(dir, score);
  for (const auto& [layout, _] : layouts) {
    SCOPED_TRACE(layout);
    expect_same_scores(mlm_eval(dir, dir.path() / layout), theirs[(dir.path() / layout).string()]);
  }
}

// ---- bad input: one line, exit 2, nothing written -------------------------------------------

void expect_one_line_error(const CliRun& run, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  for (const auto& piece : pieces) EXPECT_NE(run.err.find(piece), std::string::npos) << piece << " not in " << run.err;
}

TEST(HfRoundTripBadInput, EachDamageIsOneLineNamingTheFileAndNothingIsWritten) {
  TempDir dir;
  const auto good = export_to(dir, train_tiny(dir), "hf");
  const auto out = dir.path() / "out";
  auto copy_of_good = [&](const std::string& name) {
    const auto d = dir.path() / name;
    fs::copy(good, d, fs::copy_options::recursive);
    return d;
  };
  auto all_tools = [&](const fs::path& bad, const std::vector<std::string>& pieces) {
    SCOPED_TRACE(bad.string());
    expect_one_line_error(run_tool("mlm-export", dir, {"--checkpoint", bad.string(), "--output", out.string()}, false),
                          pieces);
    EXPECT_FALSE(fs::exists(out));
    expect_one_line_error(run_tool("mlm-fill", dir, {"--checkpoint", bad.string(), "a [MASK] b"}, false), pieces);
    expect_one_line_error(run_tool("mlm-eval", dir, tiny_args(dir, {"--checkpoint", bad.string()}), false), pieces);
  };

  const auto neither = dir.path() / "neither";
  fs::create_directories(neither);
  fs::copy_file(good / "config.json", neither / "config.json");
  all_tools(neither, {neither.string(), "neither an mlm-train checkpoint", "Hugging Face model directory"});

  const auto wider = copy_of_good("wider");
  auto config = nlohmann::json::parse(slurp((wider / "config.json").string()));
  config["hidden_size"] = config["hidden_size"].get<int>() * 2;
  std::ofstream(wider / "config.json") << config.dump();
  all_tools(wider, {(wider / "model.safetensors").string(), "weights do not match the model", "shape mismatches"});

  const auto vocab = copy_of_good("vocab");
  config = nlohmann::json::parse(slurp((vocab / "config.json").string()));
  config["vocab_size"] = config["vocab_size"].get<int>() + 10;
  std::ofstream(vocab / "config.json") << config.dump();
  all_tools(vocab, {(vocab / "tokenizer.model").string(), "the tokenizer has", "gives vocab_size"});

  const auto truncated = copy_of_good("truncated");
  fs::resize_file(truncated / "model.safetensors", 100);
  all_tools(truncated, {(truncated / "model.safetensors").string(), "truncated safetensors header"});

  const auto outside = copy_of_good("outside");
  fs::resize_file(outside / "model.safetensors", fs::file_size(outside / "model.safetensors") - 4);
  all_tools(outside, {(outside / "model.safetensors").string(), "point outside the file"});
}

}  // namespace mlm::cli::hf_round_trip

// mlm-merge: its tensors against mergekit's (the pinned reference, tests/reference/mergekit_client.py)
// on the same mlm-export directories, its output as transformers and model.init_from read it,
// the last checkpoints of a run, --eval, and each bad input refused with one line, exit 2 and
// no output directory.
#include <gtest/gtest.h>

#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/hf_client.h"
#include "mlm/model/hf/safetensors.h"

namespace mlm::cli::testing {
namespace {

namespace fs = std::filesystem;

// Three tiny runs of different seeds (2 steps, a checkpoint at each) and their exports, made
// once for the suite, in a directory of its own that no test's TempDir replaces; removed at exit.
struct Inputs {
  fs::path root, spm, run1, e1, e2, e3;
  ~Inputs() {
    std::error_code ignored;
    if (!root.empty()) fs::remove_all(root, ignored);
  }
};

// tiny_args with the suite's tokenizer.
std::vector<std::string> shared_tiny_args(const config::testing::TempDir& dir, const fs::path& spm,
                                          std::vector<std::string> extra) {
  extra.insert(extra.begin(), {"--set", "tokenizer.model=" + spm.string()});
  return tiny_args(dir, extra);
}

const Inputs& inputs(const config::testing::TempDir& dir) {
  static Inputs in;
  if (!in.root.empty()) return in;
  // Per process: ctest -j runs this binary's tests side by side.
  in.root = fs::path(::testing::TempDir()) / ("mlm_merge_cli_inputs_" + std::to_string(::getpid()));
  fs::remove_all(in.root);
  fs::create_directories(in.root);
  in.spm = in.root / "spm.model";
  std::vector<fs::path> exports;
  for (int seed = 1; seed <= 3; ++seed) {
    const auto run_dir = in.root / ("run" + std::to_string(seed));
    const CliRun run = run_tool("mlm-train", dir,
                                shared_tiny_args(dir, in.spm,
                                                 {"--set", "train.output_dir=" + run_dir.string(), "--set",
                                                  "train.seed=" + std::to_string(seed), "--set", "train.max_steps=2",
                                                  "--set", "checkpoint.every_steps=1", "--set", "checkpoint.keep_last=0",
                                                  "--set", "eval.every_steps=0"}),
                                false);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    const auto out = in.root / ("e" + std::to_string(seed));
    const CliRun exported = run_tool(
        "mlm-export", dir, {"--checkpoint", (run_dir / "checkpoints" / "step_00000002").string(), "--output", out.string()},
        false);
    EXPECT_EQ(exported.exit_code, 0) << exported.err;
    exports.push_back(out);
  }
  in.run1 = in.root / "run1";
  in.e1 = exports[0];
  in.e2 = exports[1];
  in.e3 = exports[2];
  return in;
}

CliRun merge(const config::testing::TempDir& dir, const std::vector<std::string>& args) {
  return run_tool("mlm-merge", dir, args, false);
}

model::TensorDict weights_of(const fs::path& dir) { return model::read_safetensors((dir / "model.safetensors").string()); }

// The largest |a - b| over every tensor; a tensor missing on one side fails the test.
double max_abs_difference(const fs::path& a, const fs::path& b) {
  const auto x = weights_of(a), y = weights_of(b);
  EXPECT_EQ(x.size(), y.size()) << a << " vs " << b;
  double worst = 0;
  for (const auto& [name, tensor] : x) {
    const auto it = std::find_if(y.begin(), y.end(), [&](const auto& kv) { return kv.first == name; });
    if (it == y.end()) {
      ADD_FAILURE() << name << " is not in " << b;
      continue;
    }
    EXPECT_EQ(tensor.sizes(), it->second.sizes()) << name;
    worst = std::max(worst, (tensor.to(torch::kFloat64) - it->second.to(torch::kFloat64)).abs().max().item<double>());
  }
  return worst;
}

// Element-wise: `merged`'s tensors are the mean of `a`'s and `b`'s, name by name.
void expect_mean_of(const fs::path& merged, const fs::path& a, const fs::path& b) {
  const auto m = weights_of(merged), x = weights_of(a), y = weights_of(b);
  ASSERT_EQ(m.size(), x.size()) << merged;
  ASSERT_EQ(m.size(), y.size()) << merged;
  for (size_t i = 0; i < m.size(); ++i) {
    ASSERT_EQ(m[i].first, x[i].first);
    EXPECT_TRUE(torch::allclose(m[i].second, (x[i].second + y[i].second) / 2, 0, 1e-6)) << merged << " " << m[i].first;
  }
}

TEST(MergeCli, EveryMethodGivesMergekitsTensors) {
  config::testing::TempDir dir;
  const auto& in = inputs(dir);
  const std::string e1 = in.e1.string(), e2 = in.e2.string(), e3 = in.e3.string();
  // mergekit YAML, read by both tools.
  const std::vector<std::pair<std::string, std::string>> configs = {
      {"linear", "merge_method: linear\ndtype: float32\nmodels:\n  - {model: " + e1 + ", parameters: {weight: 0.2}}\n"
                 "  - {model: " + e2 + ", parameters: {weight: 0.5}}\n  - {model: " + e3 + ", parameters: {weight: 0.3}}\n"},
      {"task_arithmetic", "merge_method: task_arithmetic\ndtype: float32\nbase_model: " + e1 + "\nparameters: {lambda: 0.8}\n"
                          "models:\n  - {model: " + e2 + ", parameters: {weight: 0.6}}\n"
                          "  - {model: " + e3 + ", parameters: {weight: 0.7}}\n"},
      {"ties", "merge_method: ties\ndtype: float32\nbase_model: " + e1 + "\nmodels:\n"
               "  - {model: " + e2 + ", parameters: {weight: 0.6, density: 0.5}}\n"
               "  - {model: " + e3 + ", parameters: {weight: 0.4, density: 0.7}}\n"},
      {"ties_rescaled", "merge_method: ties\ndtype: float32\nbase_model: " + e1 + "\n"
                        "parameters: {normalize: false, rescale: true}\nmodels:\n"
                        "  - {model: " + e2 + ", parameters: {weight: 0.6, density: 0.3}}\n"
                        "  - {model: " + e3 + ", parameters: {weight: 0.4, density: 0.9}}\n"},
      {"slerp", "merge_method: slerp\ndtype: float32\nbase_model: " + e1 + "\nparameters: {t: 0.3}\n"
                "models:\n  - {model: " + e1 + "}\n  - {model: " + e2 + "}\n"},
  };
  std::vector<std::string> reference_args = {std::string(MLM_SOURCE_DIR) + "/tests/reference/mergekit_client.py",
                                             (dir.path() / "shadow").string()};
  for (const auto& [name, yaml] : configs) {
    const auto file = dir.write(name + ".yaml", yaml);
    const CliRun run = merge(dir, {"--config", file, "--output", (dir.path() / ("ours_" + name)).string()});
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    reference_args.push_back(file);
    reference_args.push_back((dir.path() / ("mergekit_" + name)).string());
  }
  std::string command = shell_quote(MLM_PYTHON);
  for (const auto& arg : reference_args) command += " " + shell_quote(arg);
  command += " >" + (dir.path() / "py.out").string() + " 2>" + (dir.path() / "py.err").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << slurp((dir.path() / "py.err").string());
  for (const auto& [name, yaml] : configs) {
    const double worst = max_abs_difference(dir.path() / ("ours_" + name), dir.path() / ("mergekit_" + name));
    std::cout << "[ mergekit ] " << name << ": max abs difference " << worst << "\n";
    EXPECT_LE(worst, 1e-6) << name;
  }
}

TEST(MergeCli, TheResultLoadsInTransformersAndContinuesAsInitFrom) {
  config::testing::TempDir dir;
  const auto& in = inputs(dir);
  const auto out = dir.path() / "merged";
  const CliRun run = merge(dir, {"--model", in.e1.string(), "--model", in.e2.string(), "--output", out.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", out.string()})[out.string()];
  EXPECT_EQ(loaded["class"], "BertForMaskedLM");
  EXPECT_TRUE(loaded["missing"].empty()) << loaded.dump();
  EXPECT_TRUE(loaded["unexpected"].empty()) << loaded.dump();
  // Uniform average: the mean of the two, to float32 rounding.
  expect_mean_of(out, in.e1, in.e2);
  const CliRun continued = run_tool(
      "mlm-train", dir,
      shared_tiny_args(dir, in.spm, {"--set", "train.output_dir=" + (dir.path() / "continued").string(), "--set",
                          "model.init_from=" + out.string(), "--set", "train.max_steps=1", "--set", "eval.every_steps=0",
                          "--set", "checkpoint.every_steps=0"}),
      false);
  EXPECT_EQ(continued.exit_code, 0) << continued.err;
  EXPECT_NE(continued.err.find("initialised from"), std::string::npos) << continued.err;
}

TEST(MergeCli, LastCheckpointsOfARunAreAveraged) {
  config::testing::TempDir dir;
  const auto& in = inputs(dir);
  const auto out = dir.path() / "averaged";
  const CliRun run = merge(dir, {"--model", in.run1.string(), "--last", "2", "--output", out.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto recipe = nlohmann::json::parse(slurp((out / "mlm_merge.json").string()));
  ASSERT_EQ(recipe["models"].size(), 2u) << recipe.dump();
  EXPECT_NE(recipe["models"][0]["model"].get<std::string>().find("step_00000001"), std::string::npos);
  EXPECT_NE(recipe["models"][1]["model"].get<std::string>().find("step_00000002"), std::string::npos);
  expect_mean_of(out, export_to(dir, in.run1 / "checkpoints" / "step_00000001", "first"), in.e1);
  // More than the run holds: refused.
  const CliRun too_many = merge(dir, {"--model", in.run1.string(), "--last", "3", "--output", (dir.path() / "x").string()});
  EXPECT_EQ(too_many.exit_code, 2) << too_many.err;
  EXPECT_FALSE(fs::exists(dir.path() / "x"));
}

TEST(MergeCli, EvalScoresEachInputAndTheResult) {
  config::testing::TempDir dir;
  const auto& in = inputs(dir);
  const auto out = dir.path() / "merged";
  std::vector<std::string> args = {"--model", in.e1.string(), "--model", in.e2.string(), "--output", out.string(),
                                   "--eval", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  for (const auto& set : {"tokenizer.model=" + in.spm.string(),
                          "data.valid_files=[" + fixture_corpus("valid.txt") + "]", std::string("eval.max_batches=2"),
                          std::string("train.threads=1")})
    args.insert(args.end(), {"--set", set});
  const CliRun run = merge(dir, args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(slurp((out / "mlm_merge_eval.json").string()));
  ASSERT_EQ(rows.size(), 3u) << rows.dump();
  EXPECT_EQ(rows[2]["model"], "merged " + out.string());
  for (const auto& row : rows) {
    EXPECT_GT(row["num_masked"].get<int64_t>(), 0);
    EXPECT_GE(row["masked_accuracy"].get<double>(), 0.0);
    EXPECT_NE(run.out.find(row["model"].get<std::string>()), std::string::npos) << run.out;  // the printed table
  }
}

// An ELECTRA pair (gdes, as rtd_export_test's tiny pair) of two seeds: merged whole, both
// networks are the means of the inputs' and mlm-eval reads the result as the pair; merged as
// discriminators alone, one model directory that transformers loads as ElectraForPreTraining.
TEST(MergeCli, AnRtdPairMergesWholeOrItsDiscriminators) {
  config::testing::TempDir dir;
  const auto& in = inputs(dir);
  const std::vector<std::string> pair = {"--set", "model.architecture=electra", "--set", "model.objective=rtd",
                                         "--set", "model.embedding_sharing=gdes", "--set", "model.embedding_size=64",
                                         "--set", "model.generator_hidden_ratio=0.25"};
  auto pair_args = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), pair.begin(), pair.end());
    return shared_tiny_args(dir, in.spm, extra);
  };
  std::vector<fs::path> checkpoints, exports;
  for (int seed = 1; seed <= 2; ++seed) {
    const auto run_dir = dir.path() / ("pair" + std::to_string(seed));
    const CliRun run = run_tool("mlm-train", dir,
                                pair_args({"--set", "train.output_dir=" + run_dir.string(), "--set",
                                           "train.seed=" + std::to_string(seed), "--set", "train.max_steps=2", "--set",
                                           "eval.every_steps=0", "--set", "checkpoint.every_steps=0"}),
                                false);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    checkpoints.push_back(run_dir / "checkpoints" / "step_00000002");
    exports.push_back(export_to(dir, checkpoints.back(), "pair_export" + std::to_string(seed)));
  }

  const auto whole = dir.path() / "whole";
  const CliRun merged = merge(dir, {"--model", checkpoints[0].string(), "--model", checkpoints[1].string(), "--output",
                                    whole.string()});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  for (const char* network : {"generator", "discriminator"}) {
    SCOPED_TRACE(network);
    expect_mean_of(whole / network, exports[0] / network, exports[1] / network);
  }
  const auto scored = mlm_eval(dir, whole, pair_args({}));
  for (const char* key : {"mlm_loss", "rtd_loss", "rtd_accuracy", "masked_accuracy"}) {
    ASSERT_TRUE(scored.contains(key)) << scored.dump();
    EXPECT_TRUE(std::isfinite(scored[key].get<double>())) << key;
  }

  const auto discriminators = dir.path() / "discriminators";
  const CliRun alone = merge(dir, {"--model", exports[0].string(), "--model", exports[1].string(), "--pair",
                                   "discriminator", "--output", discriminators.string()});
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_FALSE(fs::exists(discriminators / "generator"));
  expect_mean_of(discriminators, exports[0] / "discriminator", exports[1] / "discriminator");
  const auto loaded =
      transformers_side(dir, {"load", "ElectraForPreTraining", discriminators.string()})[discriminators.string()];
  EXPECT_EQ(loaded["class"], "ElectraForPreTraining");
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
}

// Copies `from` into `to` (files only, one level).
void copy_dir(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) fs::copy_file(e.path(), to / e.path().filename());
}

TEST(MergeCli, BadInputIsOneLineExitTwoAndNoOutput) {
  config::testing::TempDir dir;
  const auto& in = inputs(dir);
  const std::string e1 = in.e1.string(), e2 = in.e2.string();
  // Another shape, another tokenizer of the same rows, another architecture, damaged files.
  const auto narrow_run = dir.path() / "narrow";
  ASSERT_EQ(run_tool("mlm-train", dir,
                     shared_tiny_args(dir, in.spm, {"--set", "train.output_dir=" + narrow_run.string(), "--set", "train.max_steps=1",
                                         "--set", "model.hidden_size=64", "--set", "model.intermediate_size=256",
                                         "--set", "eval.every_steps=0", "--set", "checkpoint.every_steps=0"}),
                     false)
                .exit_code,
            0);
  const auto other_tokenizer_run = dir.path() / "other_tokenizer";
  ASSERT_EQ(run_tool("mlm-train", dir,
                     shared_tiny_args(dir, in.spm, {"--set", "train.output_dir=" + other_tokenizer_run.string(), "--set",
                                         "tokenizer.model=" + (dir.path() / "spm150.model").string(), "--set",
                                         "tokenizer.vocab_size=150", "--set", "model.vocab_size=200", "--set",
                                         "train.max_steps=1", "--set", "eval.every_steps=0", "--set",
                                         "checkpoint.every_steps=0"}),
                     false)
                .exit_code,
            0);
  const auto other_architecture = dir.path() / "roberta_labelled";
  copy_dir(in.e2, other_architecture);
  {
    auto json = nlohmann::json::parse(slurp((other_architecture / "config.json").string()));
    json["model_type"] = "roberta";
    std::ofstream(other_architecture / "config.json") << json.dump();
  }
  const auto truncated = dir.path() / "truncated";
  copy_dir(in.e2, truncated);
  fs::resize_file(truncated / "model.safetensors", fs::file_size(truncated / "model.safetensors") / 2);
  const auto flipped = dir.path() / "flipped";
  copy_dir(in.run1 / "checkpoints" / "step_00000002", flipped);
  {
    std::fstream f(flipped / "model.pt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(flipped / "model.pt") / 2));
    f.put('\x5a');
  }
  const auto occupied = dir.path() / "occupied";
  fs::create_directories(occupied);
  std::ofstream(occupied / "keep.txt") << "mine";
  const auto bad_yaml = dir.write("bad.yaml", "merge_method: ties\nbase_model: " + e1 + "\nmodels:\n  - {model: " + e2 +
                                                  "}\nslices: []\n");

  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::vector<std::string> pieces;  // in the one line
  };
  const std::vector<Case> cases = {
      {"density 0", {"--method", "ties", "--base", e1, "--model", e2, "--density", "0"}, {"density 0", "(0, 1]"}},
      {"density above 1", {"--method", "ties", "--base", e1, "--model", e2, "--density", "1.5"}, {"density 1.5"}},
      {"weights summing to 0", {"--model", e1, "--model", e2, "--weight", "1", "--weight", "-1"}, {"sum to 0"}},
      {"ties without a base", {"--method", "ties", "--model", e1, "--model", e2}, {"ties needs a base model"}},
      {"task_arithmetic without a base", {"--method", "task_arithmetic", "--model", e1, "--model", e2},
       {"task_arithmetic needs a base model"}},
      {"another shape", {"--model", e1, "--model", (narrow_run / "checkpoints" / "step_00000001").string()},
       {"narrow", "hidden_size"}},
      {"another tokenizer", {"--model", e1, "--model", (other_tokenizer_run / "checkpoints" / "step_00000001").string()},
       {"other_tokenizer", "tokenizer"}},
      {"another architecture", {"--model", e1, "--model", other_architecture.string()}, {"roberta_labelled", "model_type"}},
      {"a truncated weight file", {"--model", e1, "--model", truncated.string()}, {"truncated", "model.safetensors"}},
      {"a damaged checkpoint", {"--model", e1, "--model", flipped.string()}, {"flipped", "model.pt"}},
      {"a missing model", {"--model", e1, "--model", (dir.path() / "nowhere").string()}, {"nowhere", "no such directory"}},
      {"a mergekit key it does not take", {"--config", bad_yaml}, {"bad.yaml", "slices"}},
  };
  for (const auto& c : cases) {
    const auto out = dir.path() / "out";
    auto args = c.args;
    args.insert(args.end(), {"--output", out.string()});
    const CliRun run = merge(dir, args);
    EXPECT_EQ(run.exit_code, 2) << c.name << ": " << run.err;
    const auto lines = log_free_lines(run.err);
    EXPECT_EQ(lines.size(), 1u) << c.name << ": " << run.err;
    for (const auto& piece : c.pieces) EXPECT_NE(run.err.find(piece), std::string::npos) << c.name << ": " << run.err;
    EXPECT_FALSE(fs::exists(out)) << c.name;
    for (const auto& e : fs::directory_iterator(dir.path()))
      EXPECT_EQ(e.path().filename().string().find(".out.merge-tmp"), std::string::npos) << c.name << ": left " << e.path();
  }
  const CliRun over = merge(dir, {"--model", e1, "--model", e2, "--output", occupied.string()});
  EXPECT_EQ(over.exit_code, 2) << over.err;
  EXPECT_NE(over.err.find("exists"), std::string::npos) << over.err;
  EXPECT_TRUE(fs::exists(occupied / "keep.txt"));
}

}  // namespace
}  // namespace mlm::cli::testing

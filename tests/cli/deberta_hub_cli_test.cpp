// Continued pretraining from a hub microsoft/deberta-v3-* directory through the real tools: the
// directory (tests/reference/hf_client.py save_deberta_hub: the discriminator alone in
// pytorch_model.bin with the hub's keys, config.json as the hub writes it, spm.model without
// [MASK]) continues as a generator and discriminator pair under mlm-train with its own
// sentencepiece model, exports as a pair transformers loads, continues as a masked LM with
// objective mlm, and mlm-eval scores it. Bad input is one line, exit 2, nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli/hf_client.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::deberta_hub_cli {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

constexpr int kPieces = 200, kRows = 208;

fs::path save_hub(const TempDir& dir) {
  const auto hub = dir.path() / "deberta-v3-tiny";
  transformers_side(dir, {"save_deberta_hub", hub.string(), fixture_corpus("train.txt"), std::to_string(kPieces),
                          std::to_string(kRows)});
  return hub;
}

// The recipe of docs/DEBERTA.md ("Continued pretraining from the hub") at the fixture's size:
// the hub's shape and options as model.* keys, its spm.model as the tokenizer.
std::vector<std::string> hub_args(const TempDir& dir, const fs::path& hub, const std::string& objective,
                                  const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "--set", "model.architecture=deberta_v2", "--set", "model.objective=" + objective,
      "--set", "model.embedding_sharing=gdes", "--set", "model.hidden_size=32",
      "--set", "model.num_hidden_layers=2", "--set", "model.num_attention_heads=4",
      "--set", "model.intermediate_size=48", "--set", "model.max_position_embeddings=128",
      "--set", "model.type_vocab_size=0", "--set", "model.position_buckets=16",
      "--set", "model.layer_norm_eps=1e-7", "--set", "model.vocab_size=" + std::to_string(kRows),
      "--set", "model.init_from=" + hub.string(), "--set", "tokenizer.type=unigram",
      "--set", "tokenizer.model=" + (hub / "spm.model").string(), "--set", "tokenizer.train_if_missing=false",
      "--set", "train.max_steps=4", "--set", "checkpoint.every_steps=0",
      "--set", "train.output_dir=" + out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return tiny_args(dir, args);
}

bool keys_under(const nlohmann::json& keys, const std::string& prefix) {
  for (const auto& key : keys)
    if (key.get<std::string>().rfind(prefix, 0) != 0) return false;
  return true;
}

TEST(DebertaHubCli, AHubCheckpointContinuesAsAPairAndExportsForTransformers) {
  TempDir dir;
  const auto hub = save_hub(dir);
  const auto run_dir = dir.path() / "pair";
  const CliRun run = run_tool("mlm-train", dir, hub_args(dir, hub, "rtd", run_dir), false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("initialised the DeBERTa discriminator from"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("its MLM head the checkpoint's lm_predictions.lm_head.*"), std::string::npos) << run.err;

  const auto hf = export_to(dir, run_dir / "checkpoints" / "step_00000004", "hf");
  const auto generator = (hf / "generator").string(), discriminator = (hf / "discriminator").string();
  const auto g = transformers_side(dir, {"load", "DebertaV2ForMaskedLM", generator})[generator];
  EXPECT_EQ(g["missing"], nlohmann::json::array());
  EXPECT_EQ(g["unexpected"], nlohmann::json::array());
  const auto d = transformers_side(dir, {"load", "AutoModel", discriminator})[discriminator];
  EXPECT_EQ(d["class"], "DebertaV2Model");
  EXPECT_EQ(d["missing"], nlohmann::json::array());
  EXPECT_EQ(d["mismatched"], nlohmann::json::array());
  EXPECT_TRUE(keys_under(d["unexpected"], "mask_predictions.")) << d["unexpected"];

  // The tokenizer's [MASK], added after the 200 pieces as transformers adds it, is in the export.
  const auto tokenizer = nlohmann::json::parse(std::ifstream(fs::path(discriminator) / "tokenizer.json"));
  bool mask_found = false;
  for (const auto& token : tokenizer["added_tokens"])
    mask_found = mask_found || (token["content"] == "[MASK]" && token["id"] == kPieces);
  EXPECT_TRUE(mask_found) << tokenizer["added_tokens"];

  // objective mlm continues the hub's network as a masked LM (deberta.* and lm_predictions.*);
  // mlm-eval scores the hub directory itself, its spm.model the tokenizer.
  const CliRun mlm = run_tool("mlm-train", dir, hub_args(dir, hub, "mlm", dir.path() / "mlm"), false);
  EXPECT_EQ(mlm.exit_code, 0) << mlm.err;
  EXPECT_NE(mlm.err.find("mask_predictions.dense.weight"), std::string::npos) << mlm.err;  // named, not loaded
  const auto scored = mlm_eval(dir, hub, tiny_args(dir));
  EXPECT_GT(scored.value("num_masked", 0), 0) << scored;

  // transformers reads lm_predictions.lm_head.* only with legacy false; so told, it scores
  // mlm-data's batches as mlm-eval scores the hub directory.
  const auto non_legacy = dir.path() / "non-legacy";
  fs::copy(hub, non_legacy);
  auto config_json = nlohmann::json::parse(std::ifstream(non_legacy / "config.json"));
  config_json["legacy"] = false;
  std::ofstream(non_legacy / "config.json") << config_json.dump(2);
  const auto eval_args = hub_args(dir, hub, "mlm", dir.path() / "unused");
  auto data_args = eval_args;
  data_args.insert(data_args.end(), {"--split", "valid", "--batches", "3", "--json"});
  const CliRun batches = run_tool("mlm-data", dir, data_args, false);
  ASSERT_EQ(batches.exit_code, 0) << batches.err;
  const auto batches_path = (dir.path() / "batches.jsonl").string();
  std::ofstream(batches_path) << batches.out;
  const auto theirs = transformers_side(dir, {"score", batches_path, non_legacy.string()})[non_legacy.string()];
  for (const auto& model_dir : {hub, non_legacy}) {
    const auto ours = mlm_eval(dir, model_dir, eval_args);
    EXPECT_EQ(ours["num_masked"], theirs["num_masked"]);
    const double a = ours["mlm_loss"], b = theirs["mlm_loss"];
    EXPECT_LE(std::abs(a - b), 1e-5 * std::abs(b)) << model_dir << ": mlm-eval " << a << ", transformers " << b;
  }
}

TEST(DebertaHubCli, BadInputIsOneLineExitTwoNothingWritten) {
  TempDir dir;
  const auto hub = save_hub(dir);
  const auto refused = [&](const std::string& name, const fs::path& model_dir, std::vector<std::string> extra,
                           const std::vector<std::string>& pieces) {
    SCOPED_TRACE(name);
    const auto out = dir.path() / ("refused_" + name);
    auto args = hub_args(dir, hub, "rtd", out, std::move(extra));
    args.insert(args.end(), {"--set", "model.init_from=" + model_dir.string()});
    expect_bad_input_line(run_tool("mlm-train", dir, args, false), pieces);
    // Nothing but the run directory's lock, which mlm-train takes before it reads anything.
    if (fs::exists(out))
      for (const auto& entry : fs::directory_iterator(out))
        EXPECT_EQ(entry.path().filename(), ".lock") << entry.path();
  };
  // The tokenizer's 201 ids need more rows than model.vocab_size gives.
  refused("rows", hub, {"--set", "model.vocab_size=150"}, {"150", "201"});

  // A pair whose generator is not the shape the generator ratios give.
  const auto run_dir = dir.path() / "pair";
  ASSERT_EQ(run_tool("mlm-train", dir, hub_args(dir, hub, "rtd", run_dir), false).exit_code, 0);
  const auto pair = export_to(dir, run_dir / "checkpoints" / "step_00000004", "pair");
  refused("generator", pair, {"--set", "model.generator_layers_ratio=1"},
          {pair.string(), "generator num_hidden_layers 1", "model.generator_layers_ratio gives 2"});

  // An attention type mlm-train does not compute, in config.json's string form.
  auto json = nlohmann::json::parse(std::ifstream(hub / "config.json"));
  json["pos_att_type"] = "p2c|c2p|p2p";
  std::ofstream(hub / "config.json") << json.dump(2);
  refused("attention", hub, {}, {(hub / "config.json").string(), "pos_att_type", "p2p"});
}

}  // namespace mlm::cli::deberta_hub_cli

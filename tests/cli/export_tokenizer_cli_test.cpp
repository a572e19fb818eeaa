// mlm-export and mlm-tokenizer end to end: the real executables on a short tiny run and on the
// fixture corpus. What they write is read back with the project's readers and, for the
// exported weights, with Python's torch.load (the consumer the format is for); bad input
// exits 2 with one stderr line naming the path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/config/config_loader.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/test_paths.h"
#include "mlm/text/tokenizer.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other cli tests, whose anonymous-namespace helpers have the same names.
namespace mlm::cli::export_tokenizer {

namespace fs = std::filesystem;
using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;
using testing::slurp;

std::string tiny_yaml() { return std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"; }
std::string fixture(const std::string& name) {
  return std::string(MLM_FIXTURES_DIR) + "/corpus/" + name;
}

// Exit 2, nothing on stdout and exactly one stderr line holding every piece.
void expect_one_line_error(const CliRun& run, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  for (const auto& piece : pieces) {
    EXPECT_NE(run.err.find(piece), std::string::npos) << "\"" << piece << "\" not in " << run.err;
  }
  EXPECT_TRUE(run.out.empty()) << run.out;
}

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(slurp(path.string())); }

// ---- mlm-tokenizer -----------------------------------------------------------------------

TEST(TokenizerCli, TrainsTheConfiguredModelWithTheSpecialPieces) {
  TempDir dir;
  const fs::path model = dir.path() / "out" / "spm.model";  // the directory does not exist yet
  const CliRun run = run_tool(
      "mlm-tokenizer", dir,
      {"--config", tiny_yaml(), "--set", "tokenizer.model=" + model.string(), "--set",
       "tokenizer.vocab_size=150", "--set", "data.train_files=[" + fixture("train.txt") + "]"},
      /*in_dir=*/true);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "vocab_size 150\nmodel " + model.string() + "\n");
  ASSERT_TRUE(fs::exists(model));
  const auto tokenizer = text::Tokenizer::load(model.string());
  EXPECT_EQ(tokenizer.size(), 150);
  // The fixed ids of docs/ARCHITECTURE.md, "Tokenizer".
  const text::SpecialIds& ids = tokenizer.vocab().ids;
  const int32_t want[] = {0, 1, 2, 3, 4};
  const int32_t got[] = {ids.pad, ids.unk, ids.cls, ids.sep, ids.mask};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(got[i], want[i]) << text::kSpecialPieces[i];
    EXPECT_EQ(tokenizer.id_to_piece(want[i]), text::kSpecialPieces[i]);
    EXPECT_TRUE(tokenizer.vocab().is_special[want[i]]) << text::kSpecialPieces[i];
  }
  // It is a tokenizer of this corpus: a sentence of it round-trips without [UNK].
  const std::string sentence = "A young engineer repaired the kitchen window after a long day.";
  ASSERT_NE(slurp(fixture("train.txt")).find(sentence), std::string::npos);
  const auto encoded = tokenizer.encode(sentence);
  EXPECT_EQ(std::count(encoded.begin(), encoded.end(), ids.unk), 0);
  EXPECT_EQ(tokenizer.decode(encoded), sentence);
}

TEST(TokenizerCli, TrainingFilesWinOverTrainFiles) {
  TempDir dir;
  const fs::path model = dir.path() / "spm.model";
  // data.train_files names a file that does not exist: only tokenizer.training_files is read.
  const CliRun run = run_tool(
      "mlm-tokenizer", dir,
      {"--config", tiny_yaml(), "--set", "tokenizer.model=" + model.string(), "--set",
       "tokenizer.vocab_size=120", "--set",
       "data.train_files=[" + (dir.path() / "missing.txt").string() + "]", "--set",
       "tokenizer.training_files=[" + fixture("valid.txt") + "]"},
      /*in_dir=*/true);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(text::Tokenizer::load(model.string()).size(), 120);
}

TEST(TokenizerCli, MissingCorpusFileIsOneLineNamingIt) {
  TempDir dir;
  const fs::path model = dir.path() / "spm.model";
  const std::string missing = (dir.path() / "no_such_corpus.txt").string();
  const CliRun run = run_tool("mlm-tokenizer", dir,
                              {"--config", tiny_yaml(), "--set", "tokenizer.model=" + model.string(),
                               "--set", "data.train_files=[" + missing + "]"},
                              /*in_dir=*/true);
  // docs/ARCHITECTURE.md, exit codes: a missing corpus file is a DataError, exit 2.
  expect_one_line_error(run, {"mlm-tokenizer", missing});
  EXPECT_FALSE(fs::exists(model));
}

// ---- mlm-export --------------------------------------------------------------------------

// One two-step tiny run (tokenizer trained on the way) whose last checkpoint is exported.
class ExportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::path(::testing::TempDir()) / ("mlm_cli_export_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    const std::string out = (root_ / "train.out").string(), err = (root_ / "train.err").string();
    std::string command = testing::shell_quote(std::string(MLM_BINARY_DIR) + "/mlm-train");
    for (const std::string& arg :
         std::vector<std::string>{"--config", tiny_yaml(), "--set",
                                  "train.output_dir=" + run_dir().string(), "--set",
                                  "tokenizer.model=" + (root_ / "spm.model").string(), "--set",
                                  "data.train_files=[" + fixture("train.txt") + "]", "--set",
                                  "data.valid_files=[" + fixture("valid.txt") + "]", "--set",
                                  "train.max_steps=2", "--set", "checkpoint.every_steps=0", "--set",
                                  "eval.max_batches=1", "--set", "train.threads=1", "--set",
                                  "logging.progress_bar=off"}) {
      command += " " + testing::shell_quote(arg);
    }
    command += " >" + out + " 2>" + err + " </dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << slurp(err);
    ASSERT_TRUE(fs::exists(checkpoint() / "DONE"));
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static fs::path run_dir() { return root_ / "run"; }
  static fs::path checkpoint() { return run_dir() / "checkpoints" / "step_00000002"; }

  static inline fs::path root_;
};

TEST_F(ExportCli, WritesTheRunsModelWeightsAndTokenizer) {
  TempDir dir;
  const fs::path hf = dir.path() / "hf";
  const CliRun run = run_tool("mlm-export", dir,
                              {"--checkpoint", checkpoint().string(), "--output", hf.string(),
                               "--weights", "bin"},
                              /*in_dir=*/false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_FALSE(fs::exists(hf / "model.safetensors"));  // only the format asked for

  // config.json: the checkpoint's model settings, the tokenizer's vocabulary and pad id.
  const auto model_cfg = config::load_config((checkpoint() / "config.yaml").string()).model;
  const auto tokenizer = text::Tokenizer::load((checkpoint() / "tokenizer.model").string());
  const auto json = read_json(hf / "config.json");
  EXPECT_EQ(json["model_type"], "bert");
  EXPECT_EQ(json["architectures"], nlohmann::json::array({"BertForMaskedLM"}));  // objective mlm
  EXPECT_EQ(json["vocab_size"], tokenizer.size());
  EXPECT_EQ(json["pad_token_id"], tokenizer.vocab().ids.pad);
  EXPECT_EQ(json["hidden_size"], model_cfg.hidden_size);
  EXPECT_EQ(json["num_hidden_layers"], model_cfg.num_hidden_layers);
  EXPECT_EQ(json["num_attention_heads"], model_cfg.num_attention_heads);
  EXPECT_EQ(json["intermediate_size"], model_cfg.intermediate_size);
  EXPECT_EQ(json["max_position_embeddings"], model_cfg.max_position_embeddings);
  EXPECT_EQ(json["type_vocab_size"], model_cfg.type_vocab_size);
  EXPECT_EQ(json["layer_norm_eps"], model_cfg.layer_norm_eps);
  EXPECT_EQ(json["initializer_range"], model_cfg.initializer_range);
  EXPECT_EQ(json["hidden_dropout_prob"], model_cfg.hidden_dropout_prob);
  EXPECT_EQ(json["attention_probs_dropout_prob"], model_cfg.attention_probs_dropout_prob);
  EXPECT_EQ(json["hidden_act"], "gelu");
  EXPECT_FALSE(json.contains("mlm_train_norm"));  // post-LN

  // pytorch_model.bin: the checkpoint's weights, bit for bit, with BERT's shapes.
  const auto exported = model::read_tensor_file((hf / "pytorch_model.bin").string());
  const auto saved = model::read_tensor_file((checkpoint() / "model.pt").string());
  ASSERT_EQ(exported.size(), saved.size());
  std::map<std::string, std::vector<int64_t>> shapes;
  for (size_t i = 0; i < saved.size(); ++i) {
    EXPECT_EQ(exported[i].first, saved[i].first);
    EXPECT_TRUE(torch::equal(exported[i].second, saved[i].second)) << saved[i].first;
    shapes[exported[i].first] = exported[i].second.sizes().vec();
  }
  const int64_t v = tokenizer.size(), h = model_cfg.hidden_size, ff = model_cfg.intermediate_size;
  const std::map<std::string, std::vector<int64_t>> want = {
      {"bert.embeddings.word_embeddings.weight", {v, h}},
      {"bert.embeddings.position_embeddings.weight", {model_cfg.max_position_embeddings, h}},
      {"bert.embeddings.token_type_embeddings.weight", {model_cfg.type_vocab_size, h}},
      {"cls.predictions.bias", {v}},
      {"cls.predictions.transform.dense.weight", {h, h}}};
  for (const auto& [name, shape] : want) {
    ASSERT_TRUE(shapes.count(name)) << name;
    EXPECT_EQ(shapes[name], shape) << name;
  }
  for (int64_t l = 0; l < model_cfg.num_hidden_layers; ++l) {
    const std::string layer = "bert.encoder.layer." + std::to_string(l) + ".";
    for (const char* qkv : {"query", "key", "value"}) {
      EXPECT_EQ(shapes[layer + "attention.self." + qkv + ".weight"], (std::vector<int64_t>{h, h}));
    }
    EXPECT_EQ(shapes[layer + "intermediate.dense.weight"], (std::vector<int64_t>{ff, h}));
    EXPECT_EQ(shapes[layer + "output.dense.weight"], (std::vector<int64_t>{h, ff}));
  }
  EXPECT_EQ(shapes.count("bert.encoder.layer." + std::to_string(model_cfg.num_hidden_layers) +
                         ".output.dense.weight"),
            0u);

  // Python's torch.load(weights_only=True) reads the same names and shapes.
  const fs::path listing = dir.path() / "shapes.json";
  const std::string python =
      std::string(MLM_PYTHON) +
      " -c \"import json, sys, torch; d = torch.load(sys.argv[1], weights_only=True); "
      "json.dump({k: list(t.shape) for k, t in d.items()}, open(sys.argv[2], 'w'))\" " +
      testing::shell_quote((hf / "pytorch_model.bin").string()) + " " +
      testing::shell_quote(listing.string());
  ASSERT_EQ(std::system(python.c_str()), 0) << python;
  const auto from_python = read_json(listing);
  ASSERT_EQ(from_python.size(), shapes.size());
  for (const auto& [name, shape] : shapes) {
    EXPECT_EQ(from_python.value(name, nlohmann::json()), nlohmann::json(shape)) << name;
  }

  // The tokenizer: the checkpoint's model for mlm-train, tokenizer.json for transformers (its
  // ids are compared with transformers' own in fill_mask_cli_test.cpp).
  const std::string tokenizer_bytes = slurp((checkpoint() / "tokenizer.model").string());
  EXPECT_EQ(slurp((hf / "tokenizer.model").string()), tokenizer_bytes);
  const auto tokenizer_json = read_json(hf / "tokenizer.json");
  EXPECT_EQ(tokenizer_json["model"]["type"], "Unigram");  // configs/tiny.yaml trains unigram
  EXPECT_EQ(tokenizer_json["model"]["vocab"].size(), static_cast<size_t>(tokenizer.size()));
  const auto special = read_json(hf / "special_tokens_map.json");
  EXPECT_EQ(special["pad_token"], "[PAD]");
  EXPECT_EQ(special["cls_token"], "[CLS]");
  EXPECT_EQ(special["sep_token"], "[SEP]");
  EXPECT_EQ(special["mask_token"], "[MASK]");
  EXPECT_EQ(special["unk_token"], "[UNK]");
  const auto tok_cfg = read_json(hf / "tokenizer_config.json");
  EXPECT_EQ(tok_cfg["model_max_length"], model_cfg.max_position_embeddings);
}

// Bad input needs no trained run (ctest runs each test in its own process, so a fixture's
// run would be trained again for each).
TEST(ExportCliBadInput, MissingCheckpointDirectoryIsOneLineNamingIt) {
  TempDir dir;
  const std::string missing = (dir.path() / "no_such_checkpoint").string();
  const fs::path hf = dir.path() / "hf";
  expect_one_line_error(
      run_tool("mlm-export", dir, {"--checkpoint", missing, "--output", hf.string()}, false),
      {"mlm-export", missing});
  EXPECT_FALSE(fs::exists(hf));
}

// A run directory instead of one of its checkpoints: it has config.yaml but no weights.
TEST(ExportCliBadInput, DirectoryThatIsNotACheckpointIsOneLineNamingIt) {
  TempDir dir;
  const fs::path run = dir.path() / "run";
  fs::create_directories(run / "checkpoints");
  fs::copy_file(tiny_yaml(), run / "config.yaml");
  const fs::path hf = dir.path() / "hf";
  expect_one_line_error(
      run_tool("mlm-export", dir, {"--checkpoint", run.string(), "--output", hf.string()}, false),
      {"mlm-export", run.string(), "neither an mlm-train checkpoint", "model.pt", "config.json"});
  EXPECT_FALSE(fs::exists(hf));
}

TEST(ExportCliBadInput, MissingOutputOptionIsAUsageError) {
  TempDir dir;
  expect_one_line_error(
      run_tool("mlm-export", dir, {"--checkpoint", dir.path().string()}, false), {"--output"});
}

}  // namespace mlm::cli::export_tokenizer

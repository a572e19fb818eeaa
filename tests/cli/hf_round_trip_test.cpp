// The Hugging Face round trip with the real client: `transformers` (the venv's) loads what
// mlm-export writes with no key problems and scores mlm-data's batches as mlm-eval does; a
// model saved by `transformers` (safetensors, .bin, sharded) is read back by mlm-train and
// scored the same; mlm-fill agrees with the fill-mask pipeline; bad directories and damaged
// weight files exit 2 with one line and write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::hf_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

// mlm-data --json: the validation batches mlm-eval scores, written to a file for Python.
std::string valid_batches(const TempDir& dir) {
  const CliRun run = run_tool("mlm-data", dir, tiny_args(dir, {"--split", "valid", "--batches", "3", "--json"}), false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto path = (dir.path() / "batches.jsonl").string();
  std::ofstream(path) << run.out;
  return path;
}

nlohmann::json mlm_eval(const TempDir& dir, const fs::path& model_dir) {
  return testing::mlm_eval(dir, model_dir, tiny_args(dir));
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
    expect_bad_input_line(run_tool("mlm-export", dir, {"--checkpoint", bad.string(), "--output", out.string()}, false),
                          pieces);
    EXPECT_FALSE(fs::exists(out));
    expect_bad_input_line(run_tool("mlm-fill", dir, {"--checkpoint", bad.string(), "a [MASK] b"}, false), pieces);
    expect_bad_input_line(run_tool("mlm-eval", dir, tiny_args(dir, {"--checkpoint", bad.string()}), false), pieces);
  };

  const auto neither = dir.path() / "neither";
  fs::create_directories(neither);
  fs::copy_file(good / "config.json", neither / "config.json");
  all_tools(neither, {neither.string(), "neither an mlm-train checkpoint", "Hugging Face model directory"});

  const auto wider = copy_of_good("wider");
  auto config = nlohmann::json::parse(slurp((wider / "config.json").string()));
  config["hidden_size"] = config["hidden_size"].get<int>() * 2;
  std::ofstream(wider / "config.json") << config.dump();
  // Refused before a model of config.json's shape is built: the file, the key, its value and
  // the tensor that disagrees.
  all_tools(wider, {(wider / "config.json").string(), "hidden_size " + config["hidden_size"].dump() + " disagrees with",
                    (wider / "model.safetensors").string(), "word_embeddings.weight has shape"});

  const auto vocab = copy_of_good("vocab");
  config = nlohmann::json::parse(slurp((vocab / "config.json").string()));
  // Fewer rows than the tokenizer's pieces (more would be padded rows, as a ModernBERT's).
  config["vocab_size"] = config["vocab_size"].get<int>() - 10;
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

// What the Hugging Face round trip of BERT has beyond every architecture's
// (architecture_round_trip_test.cpp): an NSP run's export loads in `transformers` as
// BertForPreTraining; bad directories and damaged weight files exit 2 with one line naming the
// file and write nothing.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/hf_client.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::hf_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

TEST(HfRoundTrip, AnNspExportLoadsAsBertForPreTraining) {
  TempDir dir;
  const auto hf = export_to(dir, train_tiny(dir, "nsp"), "hf");
  const auto loaded = transformers_side(dir, {"load", "BertForPreTraining", hf.string()})[hf.string()];
  EXPECT_EQ(loaded["class"], "BertForPreTraining");
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
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

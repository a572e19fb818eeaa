// mlm-fill against transformers' fill-mask pipeline on the same export: the same tokens in
// the same order with the same probabilities; the same answers from the checkpoint itself;
// AutoTokenizer on the export gives mlm-train's ids; a text without [MASK] exits 2.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::fill_mask {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

const std::vector<std::string> kTexts = {"The [MASK] of the house was open.", "A [MASK] and a [MASK] went to the market.",
                                         "[MASK] is here"};

std::vector<nlohmann::json> fill(const TempDir& dir, const fs::path& model_dir) {
  std::vector<std::string> args = {"--checkpoint", model_dir.string(), "--top-k", "5", "--json"};
  args.insert(args.end(), kTexts.begin(), kTexts.end());
  const CliRun run = run_tool("mlm-fill", dir, args, false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::vector<nlohmann::json> out;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(FillMaskCli, AgreesWithTheTransformersPipelineOnTheExport) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto ours = fill(dir, hf);
  ASSERT_EQ(ours.size(), kTexts.size());
  EXPECT_EQ(fill(dir, checkpoint), ours);  // the checkpoint and its export answer alike

  std::vector<std::string> args = {"fill", hf.string(), "5"};
  args.insert(args.end(), kTexts.begin(), kTexts.end());
  const auto theirs = transformers_side(dir, args)["texts"];
  ASSERT_EQ(theirs.size(), kTexts.size());
  for (size_t t = 0; t < kTexts.size(); ++t) {
    SCOPED_TRACE(kTexts[t]);
    const auto& masks = ours[t]["masks"];
    ASSERT_EQ(masks.size(), theirs[t].size());
    for (size_t m = 0; m < masks.size(); ++m) {
      ASSERT_EQ(masks[m].size(), 5u);
      for (size_t k = 0; k < 5; ++k) {
        EXPECT_EQ(masks[m][k]["token"], theirs[t][m][k]["token"]) << "mask " << m << " rank " << k;
        EXPECT_NEAR(masks[m][k]["score"].get<double>(), theirs[t][m][k]["score"].get<double>(), 1e-5);
      }
    }
  }
}

TEST(FillMaskCli, AutoTokenizerOnTheExportGivesMlmTrainsIds) {
  TempDir dir;
  const auto hf = export_to(dir, train_tiny(dir), "hf");
  const auto lines_path = (dir.path() / "lines.txt").string();
  std::string lines = slurp(fixture_corpus("valid.txt"));
  while (!lines.empty() && lines.back() == '\n') lines.pop_back();
  std::ofstream(lines_path) << lines;
  const auto theirs = transformers_side(dir, {"tokenize", hf.string(), lines_path});
  const auto tokenizer = text::Tokenizer::load((hf / "tokenizer.model").string());
  EXPECT_EQ(theirs["mask_token_id"], tokenizer.vocab().ids.mask);
  EXPECT_EQ(theirs["pad_token_id"], tokenizer.vocab().ids.pad);
  std::istringstream in(lines);
  size_t i = 0, agree = 0;
  for (std::string line; std::getline(in, line); ++i) {
    std::vector<int64_t> ids = {tokenizer.vocab().ids.cls};
    for (int32_t id : tokenizer.encode(line)) ids.push_back(id);
    ids.push_back(tokenizer.vocab().ids.sep);
    agree += theirs["ids"][i] == nlohmann::json(ids);
    EXPECT_EQ(theirs["ids"][i], nlohmann::json(ids)) << line;
  }
  EXPECT_EQ(i, theirs["ids"].size());
  EXPECT_GT(agree, 100u);
}

TEST(FillMaskCli, ATextWithoutAMaskIsOneLine) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  expect_bad_input_line(run_tool("mlm-fill", dir, {"--checkpoint", checkpoint.string(), "no mask here"}, false),
                        {"text 1 has no [MASK]"});
}

}  // namespace mlm::cli::fill_mask

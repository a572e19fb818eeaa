// Patterns read from a tokenizer.json run under a per-match budget (mlm/text/regex_budget.h):
// a pattern that backtracks without bound stops with RegexBudgetError naming the file and the
// pattern instead of hanging, while every real pipeline stays far inside the default budget.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/regex_budget.h"
#include "mlm/text/tokenizer.h"
#include "text/hf_pipeline_fixture.h"
#include "text/tokenizer_fixture.h"

// A named namespace: the unity build compiles the text tests together.
namespace mlm::text::hf_regex_budget {

namespace fs = std::filesystem;
using mlm::testing::hf_lines;
using mlm::testing::hf_reference_dir;

// A nested quantifier: on a run of n letters without the final match, ICU tries ~2^n ways.
constexpr const char* kCatastrophic = "(a+)+$";
// 40 letters: 2^40 steps, hours of matching without a budget; ~1000 units of 10,000 steps with one.
const std::string kHostileLine = "Ordinary text, then " + std::string(40, 'a') + "!";

// Restores the process-wide budget after each test.
class RegexBudgetTest : public ::testing::Test {
 protected:
  void TearDown() override { set_regex_budget(saved_); }

  // RoBERTa's reference tokenizer with its pre-tokenizer replaced by a Split on `pattern`
  // followed by ByteLevel, as llama-3 and others chain them; its roles file beside it.
  fs::path roberta_with_split(const std::string& pattern) {
    const fs::path from = hf_reference_dir() / "roberta";
    auto json = nlohmann::json::parse(mlm::testing::read_text(from / "tokenizer.json"));
    json["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
    std::ofstream(dir_ / "tokenizer.json") << json.dump();
    fs::copy_file(from / "tokenizer_config.json", dir_ / "tokenizer_config.json",
                  fs::copy_options::overwrite_existing);
    return dir_;
  }

  RegexBudget saved_ = regex_budget();
  fs::path dir_ = mlm::testing::make_temp_dir("hf_regex_budget");
};

TEST_F(RegexBudgetTest, ACatastrophicPatternStopsWithTheFileAndThePattern) {
  const auto tokenizer = Tokenizer::load_hf(roberta_with_split(kCatastrophic).string());
  std::vector<int32_t> ids;
  EXPECT_NO_THROW(tokenizer.encode("a short aaa line!", ids));  // matches fine where it can
  try {
    tokenizer.encode(kHostileLine, ids);
    FAIL() << "no RegexBudgetError";
  } catch (const RegexBudgetError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.pattern(), kCatastrophic);
    EXPECT_NE(message.find(dir_.string()), std::string::npos) << message;
    EXPECT_NE(message.find("'(a+)+$'"), std::string::npos) << message;
    EXPECT_NE(message.find("step budget (1000 units of 10,000 ICU steps"), std::string::npos) << message;
    EXPECT_NE(message.find("tokenizer.regex_step_limit"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(RegexBudgetTest, ItIsADataErrorSoTheCommandsExitWithTwo) {
  const auto tokenizer = Tokenizer::load_hf(roberta_with_split(kCatastrophic).string());
  EXPECT_THROW(tokenizer.encode(kHostileLine), DataError);
}

TEST_F(RegexBudgetTest, TheBudgetIsASetting) {
  const auto tokenizer = Tokenizer::load_hf(roberta_with_split(kCatastrophic).string());
  // 16 letters: 2^16 steps, ~7 units. Inside the default budget, over a budget of 3.
  const std::string line = std::string(16, 'a') + "!";
  EXPECT_NO_THROW(tokenizer.encode(line));
  set_regex_budget({3, RegexBudget{}.stack_limit_bytes});
  try {
    tokenizer.encode(line);
    FAIL() << "no RegexBudgetError under a budget of 3";
  } catch (const RegexBudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("step budget (3 units of 10,000 ICU steps"), std::string::npos) << e.what();
  }
}

// The budget is per match, not per text: a long document is many cheap matches. Under a
// budget of 2 units (a match may cross at most one of ICU's 10,000-step ticks) a whole 1 MB
// document goes through one call, where the units of all its matches add up to hundreds.
TEST_F(RegexBudgetTest, ALongDocumentOfCheapMatchesStaysInsideTheBudget) {
  const auto tokenizer = Tokenizer::load_hf((hf_reference_dir() / "roberta").string());
  std::string document;
  while (document.size() < (1u << 20)) document += mlm::testing::read_text(mlm::testing::corpus_path("train.txt"));
  set_regex_budget({2, RegexBudget{}.stack_limit_bytes});
  std::vector<int32_t> ids;
  EXPECT_NO_THROW(tokenizer.encode(document, ids));
  EXPECT_GT(ids.size(), document.size() / 8);
}

// ICU's backtracking stack is bounded too: a pattern that saves a state per character runs
// out of a small stack on a long text and stops with its own reason, never silently ending
// the matches there (which would tokenize the rest of the text as one gap).
TEST_F(RegexBudgetTest, AStackOverflowStopsToo) {
  const auto tokenizer = Tokenizer::load_hf(roberta_with_split("(?:a|b)*c").string());
  set_regex_budget({RegexBudget{}.step_limit, 64 << 10});
  try {
    tokenizer.encode(std::string(200000, 'a'));
    FAIL() << "no RegexBudgetError";
  } catch (const RegexBudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("backtracking stack"), std::string::npos) << e.what();
  }
}

// The margin of the default budget: every pipeline of the agreement test (hf_lines(), 4,500
// lines each) under a budget of 2 units, i.e. no match takes 20,000 engine steps; the default
// is 1000 units. Prints the slowest line's time beside it.
TEST_F(RegexBudgetTest, EveryReferencePipelineStaysUnderTwoUnitsPerMatch) {
  set_regex_budget({2, RegexBudget{}.stack_limit_bytes});
  size_t pipelines = 0;
  double slowest = 0;
  std::string slowest_where;
  for (const auto& entry : fs::directory_iterator(hf_reference_dir())) {
    if (!fs::exists(entry.path() / "tokenizer.json")) continue;
    const auto tokenizer = hf::HfTokenizer::load(entry.path().string());
    ++pipelines;
    std::vector<int32_t> ids;
    for (size_t i = 0; i < hf_lines().size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      ASSERT_NO_THROW(tokenizer.encode(hf_lines()[i], ids)) << entry.path().filename() << " line " << i;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (seconds > slowest) {
        slowest = seconds;
        slowest_where = entry.path().filename().string() + " line " + std::to_string(i);
      }
    }
  }
  EXPECT_GE(pipelines, 16u);
  std::printf("[regex budget] %zu pipelines x %zu lines under 2 units per match; slowest line %.3f ms (%s); "
              "the default budget is %d units\n",
              pipelines, hf_lines().size(), slowest * 1e3, slowest_where.c_str(), RegexBudget{}.step_limit);
}

}  // namespace mlm::text::hf_regex_budget

// mlm-eval --pll / --minimal-pairs and eval.pll_*: the pseudo-log-likelihood of every registered
// architecture agrees with minicons' MaskedLMScorer (the pinned reference client,
// tests/reference/pll_reference.py) on the same export, both variants (fp32, relative 1e-4 per
// sentence, the same minimal-pair decisions); a checkpoint scores as its export; a run's
// evaluations report what mlm-eval reports on the checkpoint; bad files are one line naming
// the file and line, exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli/hf_client.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::pll_cli {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;
using Keys = std::vector<std::string>;

std::string stimulus(const std::string& name) { return std::string(MLM_FIXTURES_DIR) + "/likelihood/" + name; }

Keys with_keys(const Keys& keys, Keys extra = {}) {
  Keys args;
  for (const auto& key : keys) args.insert(args.end(), {"--set", key});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

/// A 20-step tiny run with `model_keys`; its final checkpoint.
fs::path train(const TempDir& dir, const Keys& model_keys, const Keys& more = {}) {
  const auto run_dir = dir.path() / "run";
  Keys keys = model_keys;
  keys.insert(keys.end(), {"train.output_dir=" + run_dir.string(), "checkpoint.every_steps=0"});
  keys.insert(keys.end(), more.begin(), more.end());
  const CliRun run = run_tool("mlm-train", dir, tiny_args(dir, with_keys(keys)), false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run_dir / "checkpoints" / "step_00000020";
}

/// mlm-eval --pll sentences.txt --minimal-pairs minimal_pairs.jsonl --variant V --json.
nlohmann::json pll_eval(const TempDir& dir, const fs::path& model_dir, const std::string& variant) {
  const CliRun run = run_tool("mlm-eval", dir,
                              {"--checkpoint", model_dir.string(), "--pll", stimulus("sentences.txt"),
                               "--minimal-pairs", stimulus("minimal_pairs.jsonl"), "--variant", variant, "--json"},
                              false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception&) {
    ADD_FAILURE() << "mlm-eval --pll: no JSON\n" << run.out << run.err;
    return {};
  }
}

/// tests/reference/pll_reference.py on `dirs`: minicons' scores per directory and variant.
nlohmann::json minicons_side(const TempDir& dir, const std::vector<fs::path>& dirs) {
  std::string command = shell_quote(MLM_PYTHON) + " " +
                        shell_quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/pll_reference.py") + " " +
                        shell_quote(stimulus("sentences.txt")) + " " + shell_quote(stimulus("minimal_pairs.jsonl"));
  for (const auto& d : dirs) command += " " + shell_quote(d.string());
  const auto out = (dir.path() / "minicons.out").string(), err = (dir.path() / "minicons.err").string();
  command += " >" + out + " 2>" + err;
  EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << slurp(err);
  try {
    return nlohmann::json::parse(slurp(out));
  } catch (const std::exception&) {
    ADD_FAILURE() << command << ": no JSON\n" << slurp(err);
    return {};
  }
}

/// Ours against minicons': every sentence within 1e-4 relative, the same pair decisions.
void expect_agreement(const nlohmann::json& ours, const nlohmann::json& theirs) {
  const auto& scores = ours["pll"]["scores"];
  ASSERT_EQ(scores.size(), theirs["scores"].size());
  double worst = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double a = scores[i]["pll"], b = theirs["scores"][i];
    EXPECT_LE(std::abs(a - b), 1e-4 * std::abs(b)) << "line " << scores[i]["line"] << ": ours " << a << " minicons " << b;
    worst = std::max(worst, std::abs(a - b) / std::abs(b));
  }
  const auto& pairs = ours["minimal_pairs"]["scores"];
  ASSERT_EQ(pairs.size(), theirs["pairs"].size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    const double good = theirs["pairs"][i][0], bad = theirs["pairs"][i][1];
    EXPECT_EQ(pairs[i]["correct"].get<bool>(), good > bad) << "pair on line " << pairs[i]["line"];
    EXPECT_LE(std::abs(pairs[i]["good"].get<double>() - good), 1e-4 * std::abs(good));
  }
  std::cout << ours["pll"]["variant"] << ": largest relative difference from minicons " << worst << "\n";
}

/// What one architecture's agreement is run on: directories minicons reads, and for each the
/// directory mlm-eval scores as that one (a checkpoint beside its export; an RTD pair's
/// generator/ for minicons, the pair for mlm-eval).
struct Subject {
  std::vector<std::pair<fs::path, fs::path>> ours_theirs;
};

Subject trained(const TempDir& dir, const Keys& model_keys, bool pair = false) {
  const auto checkpoint = train(dir, model_keys);
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto theirs = pair ? hf / "generator" : hf;
  return {{{checkpoint, theirs}, {hf, theirs}}};
}

Subject hub(const TempDir& dir, const std::string& family) {
  const auto root = dir.path() / "hub";
  transformers_side(dir, {"hub_encoder", family, root.string(), fixture_corpus("train.txt")});
  return {{{root, root}}};
}

class PllAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(PllAgreement, ScoresAsMinicons) {
  TempDir dir;
  const std::string& name = GetParam();
  Subject subject;
  if (name == "bert_checkpoint") subject = trained(dir, {"model.architecture=bert"});
  else if (name == "deberta_v2_checkpoint")
    subject = trained(dir, {"model.architecture=deberta_v2", "model.type_vocab_size=0", "model.position_buckets=32"});
  else if (name == "electra_pair")
    subject = trained(dir, {"model.architecture=electra", "model.objective=rtd", "model.embedding_size=64",
                            "model.generator_hidden_ratio=0.25"}, /*pair=*/true);
  else subject = hub(dir, name);  // bert (WordPiece), modernbert, roberta (byte-level BPE), xlmr (Unigram)
  std::vector<fs::path> theirs_dirs;
  for (const auto& [ours, theirs] : subject.ours_theirs) theirs_dirs.push_back(theirs);
  const auto minicons = minicons_side(dir, {theirs_dirs.front()});
  for (const auto& [ours, theirs] : subject.ours_theirs) {
    SCOPED_TRACE(ours.string());
    for (const std::string variant : {"original", "within_word_l2r"}) {
      SCOPED_TRACE(variant);
      expect_agreement(pll_eval(dir, ours, variant), minicons[theirs.string()][variant]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, PllAgreement,
                         ::testing::Values("bert_checkpoint", "deberta_v2_checkpoint", "electra_pair", "bert",
                                           "modernbert", "roberta", "xlmr"));

// The corpus figures follow from the per-sentence ones; a JSON Lines file scores as the same
// sentences one per line; the text report names the figures.
TEST(PllCli, CorpusFiguresAndFormats) {
  TempDir dir;
  const auto checkpoint = train(dir, {"model.architecture=bert"});
  const auto ours = pll_eval(dir, checkpoint, "original");
  double sum = 0;
  int64_t tokens = 0;
  for (const auto& s : ours["pll"]["scores"]) {
    sum += s["pll"].get<double>();
    tokens += s["tokens"].get<int64_t>();
  }
  EXPECT_EQ(ours["pll"]["sentences"], 12);
  EXPECT_EQ(ours["pll"]["tokens"], tokens);
  EXPECT_NEAR(ours["pll"]["pseudo_perplexity"].get<double>(), std::exp(-sum / static_cast<double>(tokens)), 1e-9);
  // Pairs without a phenomenon count overall only.
  EXPECT_EQ(ours["minimal_pairs"]["pairs"], 6);
  EXPECT_EQ(ours["minimal_pairs"]["phenomena"]["agreement"]["pairs"], 2);
  EXPECT_EQ(ours["minimal_pairs"]["phenomena"].size(), 3u);

  const auto jsonl = dir.path() / "sentences.jsonl";
  {
    std::ifstream in(stimulus("sentences.txt"));
    std::ofstream out(jsonl);
    bool text_field = false;
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out << nlohmann::json{{(text_field = !text_field) ? "text" : "sentence", line}}.dump() << "\n";
  }
  const CliRun as_jsonl = run_tool("mlm-eval", dir, {"--checkpoint", checkpoint.string(), "--pll", jsonl.string(), "--json"}, false);
  ASSERT_EQ(as_jsonl.exit_code, 0) << as_jsonl.err;
  const auto j = nlohmann::json::parse(as_jsonl.out)["pll"];
  ASSERT_EQ(j["scores"].size(), ours["pll"]["scores"].size());
  for (size_t i = 0; i < j["scores"].size(); ++i) EXPECT_EQ(j["scores"][i]["pll"], ours["pll"]["scores"][i]["pll"]);

  const CliRun text = run_tool("mlm-eval", dir,
                               {"--checkpoint", checkpoint.string(), "--pll", stimulus("sentences.txt"), "--max", "3",
                                "--minimal-pairs", stimulus("minimal_pairs.jsonl")},
                               false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("pseudo-perplexity"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("in 3 sentences"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  agreement  "), std::string::npos) << text.out;
}

// Each bad file: exit 2, one line naming the file (and the line), nothing on stdout.
TEST(PllCli, BadInputIsOneLineNamingFileAndLine) {
  TempDir dir;
  const auto checkpoint = train(dir, {"model.architecture=bert"});
  const auto write = [&](const std::string& name, const std::string& text) {
    const auto path = (dir.path() / name).string();
    std::ofstream(path) << text;
    return path;
  };
  std::string long_sentence;
  for (int i = 0; i < 200; ++i) long_sentence += "word ";
  const struct {
    std::string option, path, message;
  } cases[] = {
      {"--minimal-pairs", write("half.jsonl", "{\"sentence_good\": \"A b.\", \"sentence_bad\": \"B a.\"}\n{\"sentence_good\": \"A b.\"}\n"),
       "half.jsonl:2: a minimal pair needs both \"sentence_good\" and \"sentence_bad\""},
      {"--pll", write("broken.jsonl", "{\"sentence\": \"One.\"}\n\n{\"sentence\": \"Two.\"\n"), "broken.jsonl:3: not JSON"},
      {"--pll", write("field.jsonl", "{\"sentense\": \"One.\"}\n"), "field.jsonl:1: no non-empty \"sentence\" or \"text\""},
      {"--pll", write("empty.txt", "\n  \n"), "empty.txt: holds no sentence"},
      {"--pll", (dir.path() / "absent.txt").string(), "absent.txt: cannot be read"},
      {"--pll", write("long.txt", "Short.\n" + long_sentence + "\n"), "long.txt:2: "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    const CliRun run = run_tool("mlm-eval", dir, {"--checkpoint", checkpoint.string(), c.option, c.path}, false);
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
    if (c.path.ends_with("long.txt"))
      EXPECT_NE(run.err.find("more than the model's 128 positions"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "");
  }
}

// eval.pll_*: each evaluation reports the pseudo-perplexity and the minimal-pair accuracy that
// mlm-eval reports on the checkpoint of that step; a sentence too long for the model stops
// the run before its first step.
TEST(PllInRun, EvaluationsReportWhatMlmEvalReports) {
  TempDir dir;
  const Keys pll = {"eval.pll_file=" + stimulus("sentences.txt"), "eval.pll_minimal_pairs=" + stimulus("minimal_pairs.jsonl"),
                    "eval.pll_sentences=5", "eval.pll_variant=within_word_l2r", "eval.every_steps=10"};
  const auto checkpoint = train(dir, {"model.architecture=bert"}, pll);
  std::ifstream metrics(dir.path() / "run" / "metrics.jsonl");
  nlohmann::json last;
  int rows = 0;
  for (std::string line; std::getline(metrics, line);) {
    const auto row = nlohmann::json::parse(line);
    if (!row.contains("eval_loss")) continue;
    EXPECT_TRUE(row.contains("eval_pseudo_perplexity")) << line;
    EXPECT_TRUE(row.contains("eval_minimal_pair_accuracy")) << line;
    EXPECT_TRUE(row.contains("eval_pll_time_s")) << line;
    last = row;
    ++rows;
  }
  EXPECT_EQ(rows, 2);
  const CliRun run = run_tool("mlm-eval", dir,
                              {"--checkpoint", checkpoint.string(), "--pll", stimulus("sentences.txt"), "--minimal-pairs",
                               stimulus("minimal_pairs.jsonl"), "--max", "5", "--variant", "within_word_l2r", "--json"},
                              false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto ours = nlohmann::json::parse(run.out);
  const double in_run = last["eval_pseudo_perplexity"], offline = ours["pll"]["pseudo_perplexity"];
  EXPECT_LE(std::abs(in_run - offline), 1e-6 * offline) << "in the run " << in_run << ", mlm-eval " << offline;
  EXPECT_EQ(last["eval_minimal_pair_accuracy"], ours["minimal_pairs"]["accuracy"]);

  std::string long_sentence;
  for (int i = 0; i < 200; ++i) long_sentence += "word ";
  const auto long_file = (dir.path() / "long.txt").string();
  std::ofstream(long_file) << long_sentence << "\n";
  const auto refused_dir = dir.path() / "refused";
  const CliRun refused = run_tool(
      "mlm-train", dir,
      tiny_args(dir, with_keys({"train.output_dir=" + refused_dir.string(), "eval.pll_file=" + long_file})), false);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("long.txt:1: "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("more than the model's 128 positions"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(refused_dir / "checkpoints" / "step_00000001"));
}

}  // namespace mlm::cli::pll_cli

// mlm-finetune against transformers (BERT, ModernBERT, an ELECTRA discriminator): the same tiny
// export fine-tuned by tests/reference/
// finetune_reference.py (the Trainer's recipe, data in file order, dropout off) and by
// mlm-finetune gives the same losses step by step and the same scores; its export loads as the
// classification class; a mlm-train checkpoint fine-tunes too; bad task files and splits exit 2
// with one line naming the file and line.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/hf_client.h"
#include "mlm/model/hf/safetensors.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::finetune_cli {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

const std::vector<std::string> kWords = {"river", "stone", "light", "paper", "garden", "window", "silver", "market",
                                         "winter", "engine", "valley", "signal", "harbor", "forest", "cloud", "bridge"};

// A deterministic word of kWords for (i, j).
const std::string& word(size_t i, size_t j) { return kWords[(i * 7 + j * 3 + i * j) % kWords.size()]; }

void write_lines(const fs::path& path, const std::vector<nlohmann::json>& rows) {
  std::ofstream out(path);
  for (const auto& r : rows) out << r.dump() << "\n";
}

// A sentence-pair task (3 labels) or a tagging task (BIO of two types) with `n` training
// examples, 24 validation and 24 test ones, and its task file (file order, no dropout).
fs::path write_task(const TempDir& dir, const std::string& kind, size_t n, const std::string& extra = "") {
  const auto root = dir.path() / kind;
  fs::create_directories(root);
  const bool tagging = kind == "token";
  auto rows = [&](size_t count, size_t offset) {
    std::vector<nlohmann::json> out;
    for (size_t i = offset; i < offset + count; ++i) {
      if (tagging) {
        std::vector<std::string> words, tags;
        for (size_t j = 0; j < 6 + i % 5; ++j) {
          words.push_back(word(i, j));
          const bool entity = words.back().size() == 6;  // a label the model must learn from the words
          tags.push_back(!entity ? "O" : (j % 2 ? "B-ALPHA" : "B-BETA"));
        }
        out.push_back({{"tokens", words}, {"tags", tags}});
      } else {
        std::string a, b;
        for (size_t j = 0; j < 4 + i % 6; ++j) a += (j ? " " : "") + word(i, j);
        for (size_t j = 0; j < 3 + i % 4; ++j) b += (j ? " " : "") + word(i + 1, j);
        out.push_back({{"text", a}, {"text_pair", b}, {"label", std::vector<std::string>{"close", "far", "apart"}[i % 3]}});
      }
    }
    return out;
  };
  write_lines(root / "train.jsonl", rows(n, 0));
  write_lines(root / "validation.jsonl", rows(24, 1000));
  write_lines(root / "test.jsonl", rows(24, 2000));
  const auto task = root / "task.yaml";
  std::ofstream out(task);
  out << "task:\n  name: " << kind << "\n";
  if (tagging) {
    out << "  kind: token_classification\n  tokens_field: tokens\n  label_field: tags\n"
           "  labels: [O, B-ALPHA, I-ALPHA, B-BETA, I-BETA]\n  metric: span_f1\n";
  } else {
    out << "  kind: sequence_classification\n  text_field: text\n  text_pair_field: text_pair\n"
           "  labels: [close, far, apart]\n  metric: accuracy\n";
  }
  for (const char* split : {"train", "validation", "test"}) out << "  " << split << ": " << (root / split).string() << ".jsonl\n";
  // Short enough that truncation happens: pairs cut longest first, tagging examples lose words.
  out << "  max_seq_len: " << (tagging ? 8 : 14) << "\nfinetune:\n  epochs: 1\n  learning_rate: 1.0e-3\n  batch_size: 16\n"
         "  warmup_ratio: 0.1\n  weight_decay: 0.01\n  seed: 7\n  shuffle: false\n  dropout: false\n  max_steps: 6\n"
      << extra;
  return task;
}

// Runs a script of tests/reference/ with the venv's Python; its stderr on failure.
void reference_script(const TempDir& dir, const std::string& script, const std::vector<std::string>& args) {
  std::string command =
      shell_quote(MLM_PYTHON) + " " + shell_quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/" + script);
  for (const auto& a : args) command += " " + shell_quote(a);
  const auto err = (dir.path() / "script.err").string();
  command = "OMP_NUM_THREADS=1 " + command + " >" + err + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << slurp(err);
}

nlohmann::json finetune(const TempDir& dir, const fs::path& model, const fs::path& task, const fs::path& output = {}) {
  // fp32 as the references compute (auto would autocast to bf16 on an AVX512-BF16 host).
  std::vector<std::string> args = {"--model", model.string(), "--task", task.string(), "--json", "--precision", "fp32"};
  if (!output.empty()) args.insert(args.end(), {"--output", output.string()});
  const CliRun run = run_tool("mlm-finetune", dir, args, false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  try {
    return nlohmann::json::parse(run.out);
  } catch (const std::exception&) {
    ADD_FAILURE() << "mlm-finetune printed no JSON: " << run.err;
    return {};
  }
}

struct ParityCase {
  std::string arch, kind, hf_class;
};

class FinetuneParity : public ::testing::TestWithParam<ParityCase> {};

TEST_P(FinetuneParity, SameLossesAndScoresAsTransformers) {
  const auto& c = GetParam();
  TempDir dir;
  const auto task = write_task(dir, c.kind, 96);
  const auto pretrained = dir.path() / "pretrained";
  reference_script(dir, "make_tiny_hf_model.py",
                   {pretrained.string(), (dir.path() / c.kind / "train.jsonl").string(), "--arch", c.arch, "--vocab", "300"});
  // transformers initialises the head and writes that starting point; both sides start there.
  const auto start = dir.path() / "start", reference = dir.path() / "reference.json";
  const auto their_model = dir.path() / "reference_model";
  reference_script(dir, "finetune_reference.py",
                   {pretrained.string(), task.string(), "--steps", "6", "--no-dropout", "--no-early-stopping",
                    "--save-init", start.string(), "--save-final", their_model.string(), "--out",
                    reference.string()});
  const auto theirs = nlohmann::json::parse(slurp(reference.string()));
  const auto out = dir.path() / "finetuned";
  const auto ours = finetune(dir, start, task, out);
  ASSERT_TRUE(ours.contains("losses"));
  EXPECT_EQ(ours["head"], "loaded");
  EXPECT_EQ(ours["model_class"], c.hf_class);
  ASSERT_EQ(ours["losses"].size(), 6u);
  ASSERT_EQ(theirs["losses"].size(), 6u);
  for (size_t s = 0; s < 6; ++s) {
    EXPECT_NEAR(ours["losses"][s].get<double>(), theirs["losses"][s].get<double>(), 1e-4) << "step " << s;
    EXPECT_NEAR(ours["learning_rates"][s].get<double>(), theirs["learning_rates"][s].get<double>(), 1e-12);
  }
  // The weights after the 6 steps, every one of them (the losses alone move little in 6 steps).
  std::map<std::string, torch::Tensor> theirs_final;
  for (auto& [key, t] : model::read_safetensors((their_model / "model.safetensors").string())) theirs_final[key] = t;
  size_t compared = 0;
  for (const auto& [key, t] : model::read_safetensors((out / "model.safetensors").string())) {
    if (!theirs_final.count(key)) continue;  // the tied decoder is stored on one side only
    ++compared;
    const double diff = (t.to(torch::kFloat64) - theirs_final[key].to(torch::kFloat64)).abs().max().item<double>();
    EXPECT_LE(diff, 1e-5) << key;
  }
  EXPECT_EQ(compared, theirs_final.size() - (theirs_final.count("cls.predictions.decoder.weight") ? 1 : 0));
  EXPECT_TRUE(theirs_final.count("classifier.weight") + theirs_final.count("classifier.out_proj.weight"))
      << "the head is among the weights compared";
  const std::string metric = ours["metric"];
  EXPECT_NEAR(ours["validation_best"].get<double>(), theirs["validation_best"].get<double>(), 1e-9);
  EXPECT_NEAR(ours["test"][metric].get<double>(), theirs["test"][metric].get<double>(), 1e-9);
  EXPECT_GT(ours["truncated"]["train"].get<int64_t>(), 0) << "truncation is part of what is compared";

  // The export is the classification class transformers loads without a missing key.
  const auto loaded = transformers_side(dir, {"load", c.hf_class, out.string()})[out.string()];
  EXPECT_EQ(loaded["class"], c.hf_class);
  EXPECT_TRUE(loaded["missing"].empty()) << loaded.dump();
  EXPECT_TRUE(loaded["unexpected"].empty()) << loaded.dump();
  // And mlm-finetune continues from it, its head included.
  EXPECT_EQ(finetune(dir, out, task)["head"], "loaded");
}

INSTANTIATE_TEST_SUITE_P(Models, FinetuneParity,
                         ::testing::Values(ParityCase{"bert", "pair", "BertForSequenceClassification"},
                                           ParityCase{"modernbert", "token", "ModernBertForTokenClassification"},
                                           ParityCase{"electra", "pair", "ElectraForSequenceClassification"},
                                           ParityCase{"roberta", "pair", "RobertaForSequenceClassification"},
                                           ParityCase{"roberta", "token", "RobertaForTokenClassification"},
                                           ParityCase{"deberta", "pair", "DebertaV2ForSequenceClassification"},
                                           ParityCase{"deberta", "token", "DebertaV2ForTokenClassification"}),
                         [](const auto& info) { return info.param.arch + "_" + info.param.kind; });

TEST(FinetuneCli, FineTunesAnMlmTrainCheckpoint) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  const auto report = finetune(dir, checkpoint, write_task(dir, "token", 64, "  early_stopping_patience: 1\n"));
  EXPECT_EQ(report["model_class"], "BertForTokenClassification");
  EXPECT_EQ(report["head"], "initialised");
  EXPECT_EQ(report["steps_run"], 6);
  EXPECT_TRUE(report["test"].contains("span_f1"));
}

TEST(FinetuneCli, BadTaskFilesAndSplitsExit2WithOneLine) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  auto run = [&](const fs::path& task) {
    return run_tool("mlm-finetune", dir, {"--model", checkpoint.string(), "--task", task.string()}, false);
  };
  const auto task = write_task(dir, "pair", 32);
  const auto train = dir.path() / "pair" / "train.jsonl";
  auto rewrite = [&](const fs::path& path, const std::string& text) { std::ofstream(path) << text; };

  const std::string good_row = R"({"text": "a b", "text_pair": "c", "label": "close"})";
  rewrite(train, good_row + "\n" + R"({"text": "a b", "text_pair": "c", "label": "perhaps"})" + "\n");
  expect_bad_input_line(run(task), {train.string() + ":2", "unknown label 'perhaps'"});
  rewrite(train, good_row + "\n" + R"({"text": "a b", "text_pair": "c"})" + "\n");
  expect_bad_input_line(run(task), {train.string() + ":2", "no field 'label'"});
  rewrite(train, good_row + "\n{not json\n");
  expect_bad_input_line(run(task), {train.string() + ":2", "not a JSON object"});
  rewrite(train, "\n");
  expect_bad_input_line(run(task), {train.string(), "no examples"});

  auto with_lines = [&](const std::string& from, const std::string& to) {
    std::string text = slurp(task.string());
    text.replace(text.find(from), from.size(), to);
    const auto edited = dir.path() / "edited.yaml";
    rewrite(edited, text);
    return edited;
  };
  rewrite(train, good_row + "\n");
  expect_bad_input_line(run(with_lines("max_seq_len: 14", "max_seq_len: 100000")),
                        {"task.max_seq_len 100000 exceeds the model's"});
  expect_bad_input_line(run(with_lines("metric: accuracy", "metric: span_f1")), {"task.metric", "span_f1"});
  const auto unknown = with_lines("  seed: 7", "  seeds: 7");
  expect_bad_input_line(run(unknown), {unknown.string() + ":", "finetune.seeds", "unknown key"});
}

// A regression task: how many of a text's words have six letters (a number the words tell).
fs::path write_regression_task(const TempDir& dir, const std::string& metric) {
  const auto root = dir.path() / "regression";
  fs::create_directories(root);
  auto rows = [&](size_t count, size_t offset) {
    std::vector<nlohmann::json> out;
    for (size_t i = offset; i < offset + count; ++i) {
      std::string text;
      double sixes = 0;
      for (size_t j = 0; j < 3 + i % 5; ++j) {
        text += (j ? " " : "") + word(i, j);
        sixes += word(i, j).size() == 6;
      }
      out.push_back({{"text", text}, {"score", sixes}});
    }
    return out;
  };
  write_lines(root / "train.jsonl", rows(48, 0));
  write_lines(root / "validation.jsonl", rows(16, 1000));
  write_lines(root / "test.jsonl", rows(16, 2000));
  const auto task = root / "task.yaml";
  std::ofstream(task) << "task:\n  name: sixes\n  kind: regression\n  label_field: score\n  metric: " << metric
                      << "\n  max_seq_len: 16\n  train: " << (root / "train.jsonl").string()
                      << "\n  validation: " << (root / "validation.jsonl").string()
                      << "\n  test: " << (root / "test.jsonl").string()
                      << "\nfinetune:\n  epochs: 1\n  learning_rate: 1.0e-3\n  batch_size: 16\n";
  return task;
}

TEST(FinetuneCli, ASuiteReportsEachTasksMeanAndSpreadOverItsSeedsAndTheAverage) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  const auto pair = write_task(dir, "pair", 32);
  write_regression_task(dir, "mse");
  // Task paths relative to the suite file's directory.
  const auto suite = dir.path() / "suite.yaml";
  std::ofstream(suite) << "suite:\n  name: small\n  seeds: [1, 2]\n  tasks: [pair/task.yaml, regression/task.yaml]\n";
  const CliRun run = run_tool("mlm-finetune", dir, {"--model", checkpoint.string(), "--suite", suite.string(), "--json"}, false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["suite"], "small");
  EXPECT_EQ(report["seeds"], (std::vector<int64_t>{1, 2}));
  ASSERT_EQ(report["tasks"].size(), 2u);
  for (const auto& t : report["tasks"]) {
    for (const char* split : {"validation", "test"}) {
      const auto per_seed = t[split]["per_seed"].get<std::vector<double>>();
      ASSERT_EQ(per_seed.size(), 2u) << t.dump();
      EXPECT_NEAR(t[split]["mean"].get<double>(), (per_seed[0] + per_seed[1]) / 2, 1e-12);
      EXPECT_NEAR(t[split]["std"].get<double>(), std::abs(per_seed[0] - per_seed[1]) / std::sqrt(2.0), 1e-12);
    }
  }
  EXPECT_EQ(report["tasks"][1]["metric"], "mse");
  EXPECT_FALSE(report["tasks"][1]["higher_is_better"].get<bool>());
  // The average is over the tasks whose higher score is better: mse is left out.
  EXPECT_EQ(report["average"]["tasks"], 1);
  for (const std::string split : {"validation", "test"}) {
    const auto& task = report["tasks"][0][split];
    EXPECT_DOUBLE_EQ(report["average"][split].get<double>(), task["mean"].get<double>()) << split;
    EXPECT_DOUBLE_EQ(report["average"][split + "_std"].get<double>(), task["std"].get<double>()) << split;
    EXPECT_EQ(report["average"][split + "_per_seed"], task["per_seed"]) << split;
  }

  // --seeds N: the seeds 1..N; the text report, one line per task and the average.
  const CliRun text = run_tool("mlm-finetune", dir, {"--model", checkpoint.string(), "--suite", suite.string(), "--seeds", "1"}, false);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("suite             small (1 seed,"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("pair              accuracy  validation "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sixes             mse       validation "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" ± "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(1 seed)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("average                     validation "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("std over the 1 seed; mse left out"), std::string::npos) << text.out;

  // A bad suite: one line naming the key, exit 2; --output and --seeds do not go with it / without it.
  std::ofstream(dir.path() / "bad.yaml") << "suite:\n  name: small\n  seeds: [1, 1]\n  tasks: [pair/task.yaml]\n";
  expect_bad_input_line(
      run_tool("mlm-finetune", dir, {"--model", checkpoint.string(), "--suite", (dir.path() / "bad.yaml").string()}, false),
      {"bad.yaml:3", "suite.seeds[1]", "given twice"});
  EXPECT_EQ(run_tool("mlm-finetune", dir,
                     {"--model", checkpoint.string(), "--suite", suite.string(), "--output", (dir.path() / "o").string()},
                     false).exit_code, 2);
  EXPECT_EQ(run_tool("mlm-finetune", dir, {"--model", checkpoint.string(), "--task", pair.string(), "--seeds", "2"}, false)
                .exit_code, 2);
  EXPECT_FALSE(fs::exists(dir.path() / "o"));
}

TEST(FinetuneCli, ARegressionTaskExportsTheOneOutputHeadTransformersLoads) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);
  const auto out = dir.path() / "regressor";
  const auto task = write_regression_task(dir, "pearson");
  const auto report = finetune(dir, checkpoint, task, out);
  EXPECT_EQ(report["model_class"], "BertForSequenceClassification");
  for (const char* metric : {"mse", "pearson", "spearman"}) EXPECT_TRUE(report["test"].contains(metric)) << metric;
  EXPECT_GE(report["tokenize_seconds"].get<double>(), 0.0);
  EXPECT_LE(report["eval_seconds"].get<double>(), report["seconds"].get<double>());
  const auto config = nlohmann::json::parse(slurp((out / "config.json").string()));
  EXPECT_EQ(config["problem_type"], "regression");
  EXPECT_EQ(config["id2label"].size(), 1u) << "transformers reads num_labels 1 from it";
  const auto loaded = transformers_side(dir, {"load", "BertForSequenceClassification", out.string()})[out.string()];
  EXPECT_TRUE(loaded["missing"].empty()) << loaded.dump();
  EXPECT_TRUE(loaded["mismatched"].empty()) << loaded.dump();

  // A target that is not a number: one line naming the file and line, exit 2.
  const auto train = dir.path() / "regression" / "train.jsonl";
  std::ofstream(train) << R"({"text": "river stone", "score": 1})" << "\n" << R"({"text": "river", "score": "high"})" << "\n";
  expect_bad_input_line(run_tool("mlm-finetune", dir, {"--model", checkpoint.string(), "--task", task.string()}, false),
                        {train.string() + ":2", "field 'score' is not a number"});
}

}  // namespace mlm::cli::finetune_cli

// The Hugging Face round trip of every registered architecture, with the real client (the
// venv's `transformers`, tests/reference/hf_client.py): a tiny run's mlm-export (safetensors and
// .bin) loads as <stem>ForMaskedLM with no key problems and scores mlm-data's batches as mlm-eval
// scores the export and the checkpoint (fp32, relative 1e-4); a model transformers itself
// initialised and saved is read by mlm-eval and scored the same, initialises a run
// (model.init_from) whose step-1 evaluation is that model, and a run of another architecture
// cannot start from it (one line, exit 2).
// The suite's parameters are the registry's names (src/model/architectures.cpp): a new
// architecture is a test here that fails until kRoundTrips says how its tiny run is shaped and
// how transformers saves one, or where its round trip is tested instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>

#include "cli/hf_client.h"
#include "mlm/config/architecture_keys.h"
#include "mlm/model/architectures.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::architecture_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;
using Keys = std::vector<std::string>;

/// The tokenizer of the tiny runs, as transformers' saved models are sized to it.
struct Vocabulary {
  int64_t size;
  int64_t pad;
};

/// What one architecture's round trip needs that its spec does not say.
struct RoundTrip {
  Keys model_keys;    // --set model.* of its tiny run (model.architecture among them)
  Keys masking_keys;  // --set masking.* of its tiny run
  bool exported = true;  // the export side runs (else `elsewhere` says where it is tested)
  bool fill_mask = false;  // mlm-fill answers as transformers' fill-mask pipeline
  /// hf_client.py saves models of this architecture sized to the tokenizer (with its pad id
  /// `pad`) under `root`; the directories it wrote. Unset: no transformers-saved side here.
  std::function<std::vector<fs::path>(const TempDir&, const fs::path& root, const Vocabulary&, int64_t pad)> save;
  /// The model.* shape keys of the first saved model, for a model.init_from run; empty: no run.
  std::function<Keys(const Vocabulary&)> init_from_shape;
  std::string init_from_note;  // a piece of what that run prints, if any
  std::string elsewhere;       // where what this table leaves out of the round trip is tested
};

/// RoBERTa's position table: data.seq_len 64 after the offset of pad id + 1.
std::string roberta_positions(int64_t pad) { return std::to_string(64 + pad + 1); }

/// RoBERTa's shape choices on the tiny run: one token type, LayerNorm eps 1e-5.
Keys roberta_keys(const std::string& architecture) {
  return {"model.architecture=" + architecture, "model.type_vocab_size=1", "model.layer_norm_eps=1e-5"};
}

/// hf_client.py save_roberta of `variant` (roberta or xlm), as the hub holds roberta-base.
auto save_roberta(const std::string& variant) {
  return [variant](const TempDir& dir, const fs::path& root, const Vocabulary& v, int64_t pad) {
    transformers_side(dir, {"save_roberta", root.string(), std::to_string(v.size), std::to_string(pad),
                            roberta_positions(v.pad), variant});
    return std::vector<fs::path>{root};
  };
}

const std::map<std::string, RoundTrip>& round_trips() {
  static const std::map<std::string, RoundTrip> table = {
      {"bert",
       {.save =
            [](const TempDir& dir, const fs::path& root, const Vocabulary& v, int64_t) {
              // Each layout the hub holds (transformers 4 wrote the .bin ones).
              transformers_side(dir, {"save", root.string(), std::to_string(v.size)});
              std::vector<fs::path> saved;
              for (const auto& [layout, weights] : {std::pair{"safetensors", "model.safetensors"},
                                                    std::pair{"bin", "pytorch_model.bin"},
                                                    std::pair{"sharded", "model.safetensors.index.json"},
                                                    std::pair{"sharded_bin", "pytorch_model.bin.index.json"}}) {
                EXPECT_TRUE(fs::exists(root / layout / weights)) << layout;
                saved.push_back(root / layout);
              }
              return saved;
            },
        .elsewhere = "model.init_from of a BERT: tests/cli/continued_pretraining_test.cpp"}},
      {"roberta",
       {.model_keys = roberta_keys("roberta"),
        .masking_keys = {"masking.mlm_probability=0.3"},
        .fill_mask = true,
        .save = save_roberta("roberta"),
        .init_from_shape =
            [](const Vocabulary& v) {
              return Keys{"model.hidden_size=64", "model.num_attention_heads=4", "model.intermediate_size=128",
                          "model.max_position_embeddings=" + roberta_positions(v.pad)};
            },
        .init_from_note = "ignoring 2 pooler"}},
      {"xlm_roberta",
       {.model_keys = roberta_keys("xlm_roberta"),
        .masking_keys = {"masking.mlm_probability=0.3"},
        .exported = false,
        .save = save_roberta("xlm"),
        .elsewhere = "its export is RoBERTa's but for config.json's model_type and class "
                     "(tests/model/roberta_behaviour_test.cpp), read by transformers in "
                     "tests/model/body_reference_test.cpp; model.init_from of a hub XLM-R and its export "
                     "loaded by transformers: tests/cli/continued_pretraining_test.cpp"}},
      // 4 layers (global 0 and 3), a 16-token window under 64-token sequences; 30% masking.
      {"modernbert",
       {.model_keys = {"model.architecture=modernbert", "model.num_hidden_layers=4", "model.intermediate_size=192",
                       "model.local_attention=16", "model.layer_norm_eps=1e-5"},
        .masking_keys = {"masking.mlm_probability=0.3"},
        .save =
            [](const TempDir& dir, const fs::path& root, const Vocabulary& v, int64_t) {
              transformers_side(dir, {"save_modernbert", root.string(), std::to_string(v.size)});
              return std::vector<fs::path>{root};
            },
        .init_from_shape =
            [](const Vocabulary&) {
              return Keys{"model.hidden_size=64", "model.num_attention_heads=4", "model.intermediate_size=96"};
            }}},
      {"electra",
       {.exported = false,
        .elsewhere = "ELECTRA trains and exports as a generator and discriminator pair: "
                     "tests/cli/electra_round_trip_test.cpp"}},
      {"deberta_v2",
       {.exported = false,
        .elsewhere = "a hub DeBERTa-v3 read, exported and loaded by transformers: tests/model/deberta_hub_test.cpp; "
                     "scored by mlm-eval as by transformers: tests/cli/deberta_hub_cli_test.cpp"}},
  };
  return table;
}

std::vector<std::string> registered_names() {
  std::vector<std::string> names;
  for (const auto* spec : model::architecture_specs()) names.emplace_back(config::to_string(spec->architecture()));
  return names;
}

const model::ArchitectureSpec& spec_named(const std::string& name) {
  for (const auto* spec : model::architecture_specs())
    if (config::to_string(spec->architecture()) == name) return *spec;
  throw std::invalid_argument(name + " is not registered");
}

/// `keys` as --set arguments, then `extra`.
Keys with_keys(const Keys& keys, Keys extra = {}) {
  Keys args;
  for (const auto& key : keys) args.insert(args.end(), {"--set", key});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

Keys operator+(Keys a, const Keys& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void expect_same_scores(const nlohmann::json& ours, const nlohmann::json& theirs) {
  EXPECT_EQ(ours["num_masked"], theirs["num_masked"]);
  const double a = ours["mlm_loss"], b = theirs["mlm_loss"];
  EXPECT_LE(std::abs(a - b), 1e-4 * std::abs(b)) << "mlm-eval " << a << " transformers " << b;
  EXPECT_EQ(ours["masked_accuracy"], theirs["masked_accuracy"]);
}

/// mlm-data --json with `args`: the validation batches mlm-eval scores, in a file for Python.
std::string valid_batches(const TempDir& dir, const Keys& args) {
  const CliRun run = run_tool("mlm-data", dir, args + Keys{"--split", "valid", "--batches", "3", "--json"}, false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto path = (dir.path() / "batches.jsonl").string();
  std::ofstream(path) << run.out;
  return path;
}

/// A 20-step tiny run with `args`; its final checkpoint.
fs::path train(const TempDir& dir, const Keys& args) {
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool(
      "mlm-train", dir, args + with_keys({"train.output_dir=" + run_dir.string(), "checkpoint.every_steps=0"}), false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run_dir / "checkpoints" / "step_00000020";
}

/// The export side: the checkpoint's export loads in transformers and scores as mlm-eval does;
/// mlm-fill answers as the fill-mask pipeline where the table says so.
void export_side(const TempDir& dir, const model::ArchitectureSpec& spec, const RoundTrip& trip,
                 const fs::path& checkpoint, const Keys& args, const std::string& batches) {
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto bin = export_to(dir, checkpoint, "hf_bin", "bin");
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", hf.string(), bin.string()});
  for (const auto& model_dir : {hf, bin}) {
    SCOPED_TRACE(model_dir.string());
    const auto& problems = loaded[model_dir.string()];
    EXPECT_EQ(problems["class"], spec.hf_class_stem() + "ForMaskedLM");
    EXPECT_EQ(problems["missing"], nlohmann::json::array());
    EXPECT_EQ(problems["unexpected"], nlohmann::json::array());
    EXPECT_EQ(problems["mismatched"], nlohmann::json::array());
  }
  // Same batches, same numbers: the checkpoint, its exports, and transformers on the export.
  const auto theirs = transformers_side(dir, {"score", batches, hf.string()})[hf.string()];
  const auto ours = mlm_eval(dir, hf, args);
  expect_same_scores(ours, theirs);
  expect_same_scores(mlm_eval(dir, checkpoint, args), theirs);
  expect_same_scores(mlm_eval(dir, bin, args), theirs);
  std::cout << "mlm-eval loss " << ours["mlm_loss"] << ", transformers loss " << theirs["mlm_loss"] << " over "
            << theirs["num_masked"] << " masked tokens\n";
  if (!trip.fill_mask) return;
  const std::string text = "The [MASK] of the house was open.";
  const CliRun fill = run_tool("mlm-fill", dir, {"--checkpoint", hf.string(), "--top-k", "3", "--json", text}, false);
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const auto filled = nlohmann::json::parse(fill.out)["masks"][0];
  const auto pipeline = transformers_side(dir, {"fill", hf.string(), "3", text})["texts"][0][0];
  ASSERT_EQ(filled.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(filled[k]["token"], pipeline[k]["token"]) << "rank " << k;
}

/// The transformers-saved side: each saved model scores the same in mlm-eval, the first
/// initialises a run exactly, and neither another architecture's run nor (where positions follow
/// the pad id) weights saved with another pad id start from it.
void saved_side(const TempDir& dir, const std::string& name, const model::ArchitectureSpec& spec,
                const RoundTrip& trip, const fs::path& tokenizer_model, const Keys& args, const std::string& batches) {
  const auto tokenizer = text::Tokenizer::load(tokenizer_model.string());
  const Vocabulary vocabulary{static_cast<int64_t>(tokenizer.size()), tokenizer.vocab().ids.pad};
  const auto saved = trip.save(dir, dir.path() / "transformers", vocabulary, vocabulary.pad);
  ASSERT_FALSE(saved.empty());
  Keys score = {"score", batches};
  for (const auto& model_dir : saved) {
    fs::copy_file(tokenizer_model, model_dir / "tokenizer.model");
    score.push_back(model_dir.string());
  }
  const auto theirs = transformers_side(dir, score);
  // The architecture comes from config.json (the arguments' model keys are overridden by it).
  const auto eval_args = tiny_args(dir, with_keys(trip.masking_keys));
  for (const auto& model_dir : saved) {
    SCOPED_TRACE(model_dir.string());
    expect_same_scores(mlm_eval(dir, model_dir, eval_args), theirs[model_dir.string()]);
  }
  const auto& first = saved.front();
  const auto& first_scores = theirs[first.string()];

  if (trip.init_from_shape) {
    // model.init_from: the run's step-1 evaluation is transformers' model (lr 1e-12).
    const auto shape = trip.init_from_shape(vocabulary);
    const auto run_dir = dir.path() / "from_transformers";
    const CliRun run = run_tool("mlm-train", dir,
                                args + with_keys(shape + Keys{"model.init_from=" + first.string(),
                                                              "train.output_dir=" + run_dir.string(),
                                                              "train.max_steps=1", "optim.learning_rate=1e-12",
                                                              "checkpoint.every_steps=0"}),
                                false);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    if (!trip.init_from_note.empty()) EXPECT_NE(run.err.find(trip.init_from_note), std::string::npos) << run.err;
    const auto after = mlm_eval(dir, run_dir / "checkpoints" / "step_00000001", args);
    EXPECT_EQ(after["num_masked"], first_scores["num_masked"]);
    EXPECT_NEAR(after["mlm_loss"].get<double>(), first_scores["mlm_loss"].get<double>(), 1e-3);

    // Weights trained with another pad id would read every position shifted.
    if (config::architecture_keys(spec.architecture()).positions_follow_pad_id()) {
      const auto other_pad = trip.save(dir, dir.path() / "other_pad", vocabulary, vocabulary.pad + 1).front();
      const CliRun shifted = run_tool("mlm-train", dir,
                                      args + with_keys(shape + Keys{"model.init_from=" + other_pad.string(),
                                                                    "train.output_dir=" +
                                                                        (dir.path() / "shifted").string()}),
                                      false);
      expect_bad_input_line(shifted, {"config.json", "pad_token_id is " + std::to_string(vocabulary.pad + 1)});
    }
  }

  // A run of another architecture cannot start from it: one line naming the file and both.
  const std::string other = name == "bert" ? "roberta" : "bert";
  const CliRun refused = run_tool(
      "mlm-train", dir,
      tiny_args(dir, with_keys(round_trips().at(other).model_keys + Keys{"model.init_from=" + first.string(),
                                                                         "train.output_dir=" +
                                                                             (dir.path() / "other").string()})),
      false);
  expect_bad_input_line(refused,
                        {(first / "config.json").string(), "a " + name + " model", "model.architecture is " + other});
}

class ArchitectureRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ArchitectureRoundTrip, ExportLoadsInTransformersAndTransformersModelsLoadInMlmTrain) {
  const std::string name = GetParam();
  const auto entry = round_trips().find(name);
  ASSERT_TRUE(entry != round_trips().end())
      << "registered architecture " << name << " has no round-trip entry in tests/cli/architecture_round_trip_test.cpp";
  const RoundTrip& trip = entry->second;
  const auto& spec = spec_named(name);
  if (!trip.exported && !trip.save) GTEST_SKIP() << name << ": " << trip.elsewhere;

  TempDir dir;
  const auto args = tiny_args(dir, with_keys(trip.model_keys + trip.masking_keys));
  // Its own tiny run, or (no export side) a BERT run for the tokenizer alone.
  const auto checkpoint = trip.exported ? train(dir, args) : train_tiny(dir);
  const auto batches = valid_batches(dir, args);
  if (trip.exported) {
    SCOPED_TRACE("export side");
    export_side(dir, spec, trip, checkpoint, args, batches);
  }
  if (trip.save) {
    SCOPED_TRACE("transformers-saved side");
    saved_side(dir, name, spec, trip, checkpoint / "tokenizer.model", args, batches);
  }
  if (!trip.elsewhere.empty()) std::cout << name << ", elsewhere: " << trip.elsewhere << "\n";
}

INSTANTIATE_TEST_SUITE_P(Registered, ArchitectureRoundTrip, ::testing::ValuesIn(registered_names()),
                         [](const auto& info) { return info.param; });

// Every entry is a registered architecture, and one that leaves a side out says where it is tested.
TEST(ArchitectureRoundTripTable, EveryEntryIsRegisteredAndEveryGapNamesItsTest) {
  const auto names = registered_names();
  for (const auto& [name, trip] : round_trips()) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " is not registered";
    if (!trip.exported || !trip.save || !trip.init_from_shape)
      EXPECT_FALSE(trip.elsewhere.empty()) << name << " leaves a side out without saying where it is tested";
  }
  for (const auto& name : names) EXPECT_EQ(round_trips().count(name), 1u) << name << " has no entry";
}

}  // namespace mlm::cli::architecture_round_trip

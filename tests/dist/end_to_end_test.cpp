// mlm-train itself on two ranks over loopback, started the way users start it
// (scripts/launch_local.sh, or the torchrun variables set by hand). Needs the mlm-train
// executable of this build (or $MLM_TRAIN).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "dist/multi_rank.h"
#include "mlm/test_paths.h"

namespace mlm::dist {
namespace {

namespace fs = std::filesystem;

std::string mlm_train() {
  if (const char* path = std::getenv("MLM_TRAIN"); path != nullptr && *path) return path;
  return std::string(MLM_BINARY_DIR) + "/mlm-train";
}

struct Scratch {
  fs::path path;
  Scratch() {
    char name[] = "/tmp/mlm_dist_e2e_XXXXXX";
    if (mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = name;
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// tiny.yaml, its tokenizer trained once into the scratch directory, one thread per rank
// (bitwise reproducible), a metrics row per step, a constant LR after warmup (so the
// schedule does not depend on train.max_steps, which the resume below raises).
std::vector<std::string> tiny_args(const fs::path& scratch, const fs::path& run_dir,
                                   int64_t max_steps) {
  const std::string fixtures = MLM_FIXTURES_DIR;
  std::vector<std::string> settings = {
      "train.output_dir=" + run_dir.string(),
      "tokenizer.model=" + (scratch / "spm_tiny.model").string(),
      "data.train_files=[" + fixtures + "/corpus/train.txt]",
      "data.valid_files=[" + fixtures + "/corpus/valid.txt]",
      "train.threads=1",
      "train.max_steps=" + std::to_string(max_steps),
      "checkpoint.every_steps=3",
      "logging.every_steps=1",
      "eval.every_steps=1000",
      "eval.max_batches=1",
      "schedule.decay=constant",
      "distributed.timeout_s=30"};
  std::vector<std::string> args;
  for (const auto& s : settings) {
    args.push_back("--set");
    args.push_back(s);
  }
  return args;
}

testing::RankResult launch_local(int ranks, const std::vector<std::string>& args) {
  testing::ProcessSpec spec;
  spec.argv = {std::string(MLM_SOURCE_DIR) + "/scripts/launch_local.sh", std::to_string(ranks),
               std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env["MLM_TRAIN"] = mlm_train();
  return testing::run_processes({spec}, 300).front();
}

// step -> loss of the train rows of metrics.jsonl
std::map<int64_t, double> train_losses(const fs::path& run_dir) {
  std::map<int64_t, double> losses;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    // The last line may be half written while the run goes on: skip what does not parse.
    const auto row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_object() && row.contains("loss") && row.contains("step")) {
      losses[row.at("step").get<int64_t>()] = row.at("loss").get<double>();
    }
  }
  return losses;
}

std::map<std::string, torch::Tensor> load_weights(const fs::path& model_pt) {
  std::ifstream in(model_pt, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::map<std::string, torch::Tensor> weights;
  for (const auto& item : torch::pickle_load(bytes).toGenericDict()) {
    weights[item.key().toStringRef()] = item.value().toTensor();
  }
  return weights;
}

fs::path checkpoint(const fs::path& run_dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step_%08lld", static_cast<long long>(step));
  return run_dir / "checkpoints" / name;
}

std::vector<std::string> with(std::vector<std::string> args,
                              const std::vector<std::string>& settings) {
  for (const auto& s : settings) args.insert(args.end(), {"--set", s});
  return args;
}

testing::RankResult run_alone(const std::vector<std::string>& args) {
  testing::ProcessSpec alone;
  alone.argv = {mlm_train(), "--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  alone.argv.insert(alone.argv.end(), args.begin(), args.end());
  return testing::run_processes({alone}, 300).front();
}

// Two ranks of mlm-train started directly (RANK, LOCAL_RANK, ... set by hand, as a Slurm
// script does), both with `args`.
std::vector<testing::ProcessSpec> two_ranks(const std::vector<std::string>& args) {
  const int port = testing::free_port();
  std::vector<testing::ProcessSpec> specs(2);
  for (int rank = 0; rank < 2; ++rank) {
    specs[rank].argv = {mlm_train(), "--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
    specs[rank].argv.insert(specs[rank].argv.end(), args.begin(), args.end());
    specs[rank].env = {{"RANK", std::to_string(rank)},  {"LOCAL_RANK", std::to_string(rank)},
                       {"WORLD_SIZE", "2"},            {"LOCAL_WORLD_SIZE", "2"},
                       {"MASTER_ADDR", "127.0.0.1"},   {"MASTER_PORT", std::to_string(port)}};
  }
  return specs;
}

double max_abs_difference(const std::map<std::string, torch::Tensor>& a,
                          const std::map<std::string, torch::Tensor>& b) {
  double worst = 0;
  for (const auto& [name, tensor] : a) {
    worst = std::max(worst, (tensor - b.at(name)).abs().max().item<double>());
  }
  return worst;
}

// The data-parallel contract end to end: the data pipeline deals the sequences of one global
// stream to the ranks and masks each by its sample id, so 2 ranks x B (and 2 ranks x B/2 x 2
// accumulation steps) see the same global batches as one process x 2B and take the same steps.
// Dropout off, fp32, one thread per process.
TEST(DistEndToEnd, TwoRanksMatchOneProcessWithTheWholeBatch) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  Scratch scratch;
  const std::vector<std::string> no_dropout = {"model.hidden_dropout_prob=0",
                                               "model.attention_probs_dropout_prob=0"};
  auto run_args = [&](const fs::path& run_dir, int64_t micro_batch, int64_t accum) {
    auto settings = no_dropout;
    settings.push_back("train.micro_batch_size=" + std::to_string(micro_batch));
    settings.push_back("train.grad_accum_steps=" + std::to_string(accum));
    settings.push_back("checkpoint.every_steps=5");
    return with(tiny_args(scratch.path, run_dir, 5), settings);
  };
  const fs::path one = scratch.path / "one", two = scratch.path / "two",
                 two_accum = scratch.path / "two_accum";
  const auto reference = run_alone(run_args(one, 16, 1));
  ASSERT_EQ(reference.exit_code, 0) << reference.summary();
  const auto pair = launch_local(2, run_args(two, 8, 1));
  ASSERT_EQ(pair.exit_code, 0) << pair.summary();
  const auto pair_accum = launch_local(2, run_args(two_accum, 4, 2));
  ASSERT_EQ(pair_accum.exit_code, 0) << pair_accum.summary();

  const auto want = train_losses(one);
  ASSERT_EQ(want.size(), 5u);
  const auto want_weights = load_weights(checkpoint(one, 5) / "model.pt");
  for (const auto& run_dir : {two, two_accum}) {
    SCOPED_TRACE(run_dir.filename().string());
    const auto got = train_losses(run_dir);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [step, loss] : want) EXPECT_NEAR(got.at(step), loss, 1e-5) << "step " << step;
    const auto got_weights = load_weights(checkpoint(run_dir, 5) / "model.pt");
    ASSERT_EQ(got_weights.size(), want_weights.size());
    EXPECT_LT(max_abs_difference(want_weights, got_weights), 1e-5);
  }
}

TEST(DistEndToEnd, StoppedAndResumedTwoRankRunMatchesTheUninterruptedOne) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  Scratch scratch;
  const fs::path reference = scratch.path / "reference", resumed = scratch.path / "resumed";

  const auto full = launch_local(2, tiny_args(scratch.path, reference, 6));
  ASSERT_EQ(full.exit_code, 0) << full.summary();
  const auto first = launch_local(2, tiny_args(scratch.path, resumed, 3));
  ASSERT_EQ(first.exit_code, 0) << first.summary();
  auto args = tiny_args(scratch.path, resumed, 6);
  args.insert(args.end(), {"--resume", "latest"});
  const auto second = launch_local(2, args);
  ASSERT_EQ(second.exit_code, 0) << second.summary();

  const auto want = train_losses(reference);
  const auto got = train_losses(resumed);
  ASSERT_EQ(want.size(), 6u);
  EXPECT_EQ(got, want) << "the losses of the resumed run differ";
  const auto want_weights = load_weights(checkpoint(reference, 6) / "model.pt");
  const auto got_weights = load_weights(checkpoint(resumed, 6) / "model.pt");
  ASSERT_EQ(got_weights.size(), want_weights.size());
  for (const auto& [name, tensor] : want_weights) {
    ASSERT_TRUE(got_weights.count(name)) << name;
    EXPECT_TRUE(torch::equal(got_weights.at(name), tensor)) << "weight " << name;
  }

  // One process continues what two wrote only with their global batch: refused, naming it.
  auto alone_args = tiny_args(scratch.path, resumed, 9);
  alone_args.insert(alone_args.end(), {"--resume", "latest"});
  const auto refused = run_alone(alone_args);
  EXPECT_EQ(refused.exit_code, 2) << refused.summary();
  EXPECT_NE(refused.output.find("global batch of 16 sequences"), std::string::npos) << refused.summary();
  EXPECT_NE(refused.output.find("set their product to 16"), std::string::npos) << refused.summary();
}

// Resume on another world size: a run checkpointed by N ranks continues on M with the same
// global batch (micro-batch and accumulation set for M), over the same sequences and masks
// (the one global stream, sharded by sample id), so its losses are the uninterrupted run's up
// to the order of the gradient sums. Dropout off, fp32, one thread a process; the streaming
// path and a prepared store; 2 -> 1, 1 -> 2 and 2 -> 4 ranks.
class WorldSizeChange : public ::testing::TestWithParam<bool> {};

TEST_P(WorldSizeChange, TwoToOneOneToTwoAndTwoToFourContinueTheUninterruptedRun) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  const bool store = GetParam();
  Scratch scratch;
  std::vector<std::string> common = {"model.hidden_dropout_prob=0", "model.attention_probs_dropout_prob=0",
                                     "train.ema_decay=0.9"};
  if (store) {
    // mlm-data prepare writes the store from the tiny corpus with the tiny tokenizer.
    // A one-step run trains the shared tokenizer the store is tokenized with.
    const auto trained = run_alone(tiny_args(scratch.path, scratch.path / "prep", 1));
    ASSERT_EQ(trained.exit_code, 0) << trained.summary();
    testing::ProcessSpec prepare;
    prepare.argv = {std::string(MLM_BINARY_DIR) + "/mlm-data", "prepare", "--config",
                    std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
    for (const auto& a : with(tiny_args(scratch.path, scratch.path / "prep", 1),
                              {"data.store=" + (scratch.path / "store").string()})) {
      prepare.argv.push_back(a);
    }
    const auto made = testing::run_processes({prepare}, 300).front();
    ASSERT_EQ(made.exit_code, 0) << made.summary();
    common.push_back("data.store=" + (scratch.path / "store").string());
  }
  auto args = [&](const fs::path& dir, int64_t steps, int64_t micro, bool resume) {
    auto settings = common;
    settings.push_back("train.micro_batch_size=" + std::to_string(micro));
    auto out = with(tiny_args(scratch.path, dir, steps), settings);
    if (resume) out.insert(out.end(), {"--resume", "latest"});
    return out;
  };
  const fs::path reference = scratch.path / "reference";
  const auto full = run_alone(args(reference, 6, 16, false));
  ASSERT_EQ(full.exit_code, 0) << full.summary();
  const auto want = train_losses(reference);
  ASSERT_EQ(want.size(), 6u);
  const auto want_weights = load_weights(checkpoint(reference, 6) / "model.pt");
  const auto want_ema = load_weights(checkpoint(reference, 6) / "ema.pt");

  // (ranks before, ranks after): each run's micro-batch makes the global batch of 16.
  for (const auto& [before, after] : std::vector<std::pair<int, int>>{{2, 1}, {1, 2}, {2, 4}}) {
    const std::string change = std::to_string(before) + " -> " + std::to_string(after);
    SCOPED_TRACE(change);
    const fs::path dir = scratch.path / ("from_" + std::to_string(before) + "_to_" + std::to_string(after));
    auto launch = [&](int ranks, int64_t steps, bool resume) {
      const auto run_args = args(dir, steps, 16 / ranks, resume);
      return ranks == 1 ? run_alone(run_args) : launch_local(ranks, run_args);
    };
    const auto first = launch(before, 3, false);
    ASSERT_EQ(first.exit_code, 0) << first.summary();
    const auto second = launch(after, 6, true);
    ASSERT_EQ(second.exit_code, 0) << second.summary();
    EXPECT_NE(second.output.find("continuing it on"), std::string::npos) << second.summary();
    const auto got = train_losses(dir);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [step, loss] : want) {
      EXPECT_NEAR(got.at(step), loss, 1e-5) << "step " << step;
      std::printf("[ world size change %s%s ] step %lld: loss %.9f, uninterrupted %.9f\n", change.c_str(),
                  store ? ", store" : "", static_cast<long long>(step), got.at(step), loss);
    }
    EXPECT_LT(max_abs_difference(want_weights, load_weights(checkpoint(dir, 6) / "model.pt")), 1e-5);
    const auto ema = load_weights(checkpoint(dir, 6) / "ema.pt");
    ASSERT_EQ(ema.size(), want_ema.size());
    EXPECT_LT(max_abs_difference(want_ema, ema), 1e-5) << "ema.pt";
  }
}

INSTANTIATE_TEST_SUITE_P(DistEndToEnd, WorldSizeChange, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "PreparedStore" : "Streaming"; });

// The README's torchrun line, with the launcher's own store (TORCHELASTIC_USE_AGENT_STORE),
// run by the torchrun of the project's venv.
TEST(DistEndToEnd, TorchrunStartsTwoRanks) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  const std::string torchrun = std::string(MLM_PYTHON_BIN_DIR) + "/torchrun";
  ASSERT_TRUE(fs::exists(torchrun)) << torchrun << " is missing: run scripts/setup.sh";
  Scratch scratch;
  const fs::path run_dir = scratch.path / "run";
  testing::ProcessSpec spec;
  spec.argv = {torchrun, "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
               "--master_port", std::to_string(testing::free_port()), "--no-python", mlm_train(), "--config",
               std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  const auto args = tiny_args(scratch.path, run_dir, 3);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  const auto result = testing::run_processes({spec}, 300).front();
  ASSERT_EQ(result.exit_code, 0) << result.summary();
  EXPECT_NE(result.output.find("rank 1/2"), std::string::npos) << result.summary();
  EXPECT_NE(result.output.find("(launcher's)"), std::string::npos) << result.summary();
  EXPECT_EQ(train_losses(run_dir).size(), 3u);
}

// A rank whose peers never come says what it waits for, when it starts and while it waits,
// and LOCAL_RANK=1 without LOCAL_WORLD_SIZE is accepted (it used to exit at once while rank 0
// waited in silence).
TEST(DistEndToEnd, ARankAloneSaysWhatItWaitsForUntilTheTimeout) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  Scratch scratch;
  auto args = tiny_args(scratch.path, scratch.path / "run", 3);
  args.insert(args.end(), {"--set", "distributed.timeout_s=4"});
  const int port = testing::free_port();
  testing::ProcessSpec spec;
  spec.argv = {mlm_train(), "--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"RANK", "1"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "2"},
              {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(port)}};
  const auto result = testing::run_processes({spec}, 60).front();
  EXPECT_EQ(result.exit_code, 1) << result.summary();
  const std::string waiting = "rank 1 of WORLD_SIZE=2 waiting for the gloo rendezvous at 127.0.0.1:" +
                              std::to_string(port);
  EXPECT_NE(result.output.find(waiting), std::string::npos) << result.summary();
  EXPECT_NE(result.output.find("distributed.timeout_s=4 s"), std::string::npos) << result.summary();
  EXPECT_NE(result.output.find("still " + waiting), std::string::npos) << result.summary();
  EXPECT_NE(result.output.find("LOCAL_WORLD_SIZE is not"), std::string::npos) << result.summary();
  EXPECT_LT(result.end_s, 4 + 10) << result.summary();
}

TEST(DistEndToEnd, KilledRankMakesTheOtherExitWithinTheTimeout) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  Scratch scratch;
  const fs::path run_dir = scratch.path / "run";
  constexpr double kTimeoutS = 5;
  auto args = tiny_args(scratch.path, run_dir, 100000);
  args.insert(args.end(), {"--set", "distributed.timeout_s=5"});
  // Rank 1 is killed once training is under way (a few steps logged).
  double killed_at = -1;
  const auto results = testing::run_processes(two_ranks(args), 180, [&](double now, const std::vector<int>& pids) {
    if (killed_at >= 0 || pids[1] < 0) return;
    if (train_losses(run_dir).size() >= 3) {
      kill(pids[1], SIGKILL);
      killed_at = now;
    }
  });
  ASSERT_GE(killed_at, 0) << "training never got under way; rank 0: " << results[0].summary();
  EXPECT_EQ(results[1].signal, SIGKILL) << results[1].summary();
  EXPECT_EQ(results[0].exit_code, 1) << results[0].summary();
  EXPECT_NE(results[0].output.find("[dist]"), std::string::npos) << results[0].summary();
  EXPECT_LT(results[0].end_s - killed_at, kTimeoutS + 5) << results[0].summary();
}

// Preemption as Slurm delivers it: SIGTERM to every rank at once, or to one rank only. Either
// way every rank stops after the same step, one complete checkpoint of that step is written,
// every rank exits 143, and the same command run again (--resume auto) finishes the run with
// exactly the losses and weights of an uninterrupted one.
class Preemption : public ::testing::TestWithParam<bool> {};

TEST_P(Preemption, OneCheckpointEveryRankExits143AndTheSameCommandContinuesExactly) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  const bool every_rank = GetParam();
  Scratch scratch;
  const fs::path reference = scratch.path / "reference", preempted = scratch.path / "preempted";
  const auto full = launch_local(2, tiny_args(scratch.path, reference, 8));
  ASSERT_EQ(full.exit_code, 0) << full.summary();

  // No periodic checkpoint: the only one on disk is the one the signal made.
  auto args = with(tiny_args(scratch.path, preempted, 8), {"checkpoint.every_steps=100"});
  args.insert(args.end(), {"--resume", "auto"});
  bool sent = false;
  const auto stopped = testing::run_processes(two_ranks(args), 180,
                                              [&](double, const std::vector<int>& pids) {
    if (sent || pids[0] < 0 || pids[1] < 0 || train_losses(preempted).size() < 3) return;
    if (every_rank) kill(pids[0], SIGTERM);
    kill(pids[1], SIGTERM);
    sent = true;
  });
  ASSERT_TRUE(sent) << stopped[0].summary();
  for (const auto& rank : stopped) EXPECT_EQ(rank.exit_code, 143) << rank.summary();
  const auto logged = train_losses(preempted);
  ASSERT_FALSE(logged.empty());
  const int64_t last_step = logged.rbegin()->first;
  ASSERT_LT(last_step, 8) << "the signal came too late to test anything";
  std::vector<std::string> checkpoints;
  for (const auto& entry : fs::directory_iterator(preempted / "checkpoints")) {
    checkpoints.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(checkpoints, std::vector<std::string>{checkpoint(preempted, last_step).filename().string()})
      << "one checkpoint, of step " << last_step << ", the step both ranks stopped after";
  EXPECT_TRUE(fs::exists(checkpoint(preempted, last_step) / "DONE"));

  std::printf("SIGTERM to %s: both ranks exited 143 after step %lld, one checkpoint, of that step\n",
              every_rank ? "every rank" : "rank 1 only", static_cast<long long>(last_step));
  const auto resumed = testing::run_processes(two_ranks(args), 180);
  for (const auto& rank : resumed) ASSERT_EQ(rank.exit_code, 0) << rank.summary();
  EXPECT_EQ(train_losses(preempted), train_losses(reference));
  const auto want = load_weights(checkpoint(reference, 8) / "model.pt");
  const auto got = load_weights(checkpoint(preempted, 8) / "model.pt");
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, tensor] : want) EXPECT_TRUE(torch::equal(got.at(name), tensor)) << name;
}

INSTANTIATE_TEST_SUITE_P(DistEndToEnd, Preemption, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "EveryRank" : "OneRank"; });

// The pids of `parent`'s children whose environment has RANK=`rank`.
std::vector<int> children_with_rank(int parent, int rank) {
  std::vector<int> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: the command name may hold spaces, so parse after ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    std::string state;
    int ppid = -1;
    rest >> state >> ppid;
    if (ppid != parent) continue;
    std::ifstream environ(entry.path() / "environ", std::ios::binary);
    const std::string vars((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
    // NUL-separated entries: RANK=1 whole, not the tail of LOCAL_RANK=1.
    const std::string entry_text = "RANK=" + std::to_string(rank) + '\0';
    if (vars.rfind(entry_text, 0) == 0 || vars.find('\0' + entry_text) != std::string::npos) {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

// torchrun --max-restarts: a worker killed mid-run makes torchrun restart the worker group,
// which resumes from the last complete checkpoint with no flag at all
// (TORCHELASTIC_RESTART_COUNT > 0) and then logs exactly the losses an uninterrupted run logs.
TEST(DistEndToEnd, ElasticRestartResumesWithTheLossesOfAnUninterruptedRun) {
  ASSERT_TRUE(fs::exists(mlm_train())) << mlm_train() << " is not built";
  const std::string torchrun = std::string(MLM_PYTHON_BIN_DIR) + "/torchrun";
  ASSERT_TRUE(fs::exists(torchrun)) << torchrun << " is missing: run scripts/setup.sh";
  Scratch scratch;
  const fs::path reference = scratch.path / "reference", elastic = scratch.path / "elastic";
  const auto full = launch_local(2, tiny_args(scratch.path, reference, 9));
  ASSERT_EQ(full.exit_code, 0) << full.summary();

  testing::ProcessSpec spec;
  spec.argv = {torchrun, "--nproc_per_node", "2", "--max-restarts", "1", "--monitor-interval",
               "0.5", "--master_addr", "127.0.0.1", "--master_port",
               std::to_string(testing::free_port()), "--no-python", mlm_train(), "--config",
               std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"};
  const auto args = with(tiny_args(scratch.path, elastic, 9), {"distributed.timeout_s=10"});
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  int killed = -1;
  size_t killed_after = 0;
  const auto result = testing::run_processes({spec}, 300, [&](double, const std::vector<int>& pids) {
    if (killed >= 0 || pids[0] < 0 || train_losses(elastic).size() < 5) return;
    const auto rank1 = children_with_rank(pids[0], 1);
    if (rank1.size() != 1) return;
    killed_after = train_losses(elastic).size();
    killed = rank1.front();
    kill(killed, SIGKILL);
  }).front();
  ASSERT_GE(killed, 0) << "no worker of rank 1 was found to kill\n" << result.summary();
  ASSERT_EQ(result.exit_code, 0) << result.summary();
  EXPECT_NE(result.output.find("restart 1 of the worker group"), std::string::npos)
      << result.summary();
  const auto resumed_at = result.output.find("resumed from");
  std::printf("rank 1 SIGKILLed after %zu logged steps; %s\n", killed_after,
              resumed_at == std::string::npos
                  ? "no resume logged"
                  : result.output.substr(resumed_at, result.output.find('\n', resumed_at) - resumed_at).c_str());
  EXPECT_EQ(train_losses(elastic), train_losses(reference));
}

}  // namespace
}  // namespace mlm::dist

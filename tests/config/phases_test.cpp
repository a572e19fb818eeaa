// The phases: list: read in block style, each phase's config resolved from the run's with its
// `set:` entries, the dump's round trip, and every rule a phase breaks as one line naming the
// phase's key.
#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <utility>
#include <vector>

#include "config_test_util.h"
#include "mlm/config/phases.h"

namespace mlm::config {
namespace {

const std::string kTwoPhases =
    "data:\n"
    "  seq_len: 128\n"
    "train:\n"
    "  micro_batch_size: 256\n"
    "phases:\n"
    "  - name: seq128\n"
    "    steps: 900\n"
    "  - name: seq512\n"
    "    tokens: 1000000\n"
    "    optimizer: reset\n"
    "    lr_schedule: restart\n"
    "    set:\n"
    "      data.seq_len: 512\n"
    "      train.micro_batch_size: 64\n"
    "      optim.learning_rate: 2.0e-5\n"
    "      data.sources: [{files: [a.txt], weight: 0.25}, {files: [b.txt]}]\n";

RunConfig load(const std::string& yaml) { return load_config_from_string(yaml, "p.yaml"); }

// A later phase's seed feeds its data order: these values, from the first release's
// phase_seed, must never change (a resumed run would read its data in another order).
TEST(Phases, PhaseSeedsArePinned) {
  const std::vector<std::pair<int64_t, std::array<int64_t, 3>>> pinned = {
      {0, {8147104208329303767ll, 3980143261097177850ll, 243808509735772839ll}},
      {42, {6839728766377637706ll, 1474913046063446145ll, 2569641874231381929ll}},
      {-1, {8245168133484221968ll, 8417223528544944484ll, 2024363799162208500ll}},
      {INT64_MAX, {1527823816519176019ll, 8720658416722345123ll, 8505832573251952840ll}},
      {123456789, {1233487586143877948ll, 4416041720181487383ll, 1767385882581368562ll}},
  };
  RunConfig run;
  run.phases.resize(4);
  for (const auto& [seed, later] : pinned) {
    run.train.seed = seed;
    EXPECT_EQ(phase_config(run, 0).train.seed, seed);
    for (int64_t i = 1; i <= 3; ++i) {
      EXPECT_EQ(phase_config(run, i).train.seed, later[static_cast<size_t>(i - 1)]) << seed << " " << i;
    }
  }
}

TEST(Phases, ResolveEachPhasesConfig) {
  const auto run = load(kTwoPhases);
  ASSERT_EQ(run.phases.size(), 2u);
  EXPECT_EQ(phase_count(run), 2);
  EXPECT_EQ(run.phases[1].name, "seq512");
  EXPECT_EQ(run.phases[1].tokens, 1000000);
  EXPECT_EQ(run.phases[1].optimizer, PhaseOptimizer::reset);
  EXPECT_EQ(run.phases[1].lr_schedule, PhaseSchedule::restart);

  const auto first = phase_config(run, 0);
  EXPECT_EQ(first.data.seq_len, 128);
  EXPECT_EQ(first.train.seed, run.train.seed);  // the first phase is the run as configured
  const auto second = phase_config(run, 1);
  EXPECT_EQ(second.data.seq_len, 512);
  EXPECT_EQ(second.train.micro_batch_size, 64);
  EXPECT_EQ(second.optim.learning_rate, 2e-5);
  ASSERT_EQ(second.data.sources.size(), 2u);
  EXPECT_EQ(second.data.sources[0].weight, 0.25);
  EXPECT_EQ(second.data.sources[1].files, std::vector<std::string>{"b.txt"});
  // Its own data order, the same every time it is resolved.
  EXPECT_NE(second.train.seed, run.train.seed);
  EXPECT_EQ(second.train.seed, phase_config(run, 1).train.seed);
  EXPECT_GE(second.train.seed, 0);

  const auto unphased = load("data:\n  seq_len: 64\n");
  EXPECT_EQ(phase_count(unphased), 1);
  EXPECT_EQ(phase_config(unphased, 0).data.seq_len, 64);
}

TEST(Phases, DumpLoadsBackEqual) {
  const auto run = load(kTwoPhases);
  const auto again = load(dump_config(run));
  ASSERT_EQ(again.phases.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again.phases[i].name, run.phases[i].name);
    EXPECT_EQ(again.phases[i].steps, run.phases[i].steps);
    EXPECT_EQ(again.phases[i].tokens, run.phases[i].tokens);
    EXPECT_EQ(again.phases[i].optimizer, run.phases[i].optimizer);
    EXPECT_EQ(again.phases[i].lr_schedule, run.phases[i].lr_schedule);
    EXPECT_EQ(again.phases[i].set, run.phases[i].set);
  }
  EXPECT_EQ(dump_config(again), dump_config(run));
  EXPECT_EQ(testing::fingerprint(phase_config(again, 1)), testing::fingerprint(phase_config(run, 1)));
}

std::string with_phase(const std::string& entry) {
  return "phases:\n  - name: a\n    steps: 10\n" + entry;
}

TEST(Phases, BadPhasesNameTheirKey) {
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {model.hidden_size: 512}\n")),
                      "phases[1].set.model.hidden_size", "p.yaml", "cannot change between phases",
                      "the model is built once");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {model.architecture: modernbert}\n")),
                      "phases[1].set.model.architecture", "cannot change between phases");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {tokenizer.vocab_size: 9}\n")),
                      "phases[1].set.tokenizer.vocab_size", "the tokenizer is the run's");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {train.max_steps: 9}\n")),
                      "phases[1].set.train.max_steps", "a phase ends after its own 'steps' or 'tokens'");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {data.seq_lenn: 512}\n")),
                      "phases[1].set.data.seq_lenn", "unknown key 'data.seq_lenn'", "did you mean 'data.seq_len'");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {data.seq_len: long}\n")),
                      "phases[1].set.data.seq_len", "expected an integer");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {data.seq_len: 2}\n")),
                      "phases[1].set.data.seq_len", "phases[1]", "must be >=");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {optim.learning_rate: 1.0e-5}\n")),
                      "phases[1].set.optim.learning_rate", "lr_schedule: restart");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {schedule.decay: cosine}\n")),
                      "phases[1].set.schedule.decay", "lr_schedule: restart");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    set: {model.global_rope_theta: 8.0e5}\n")),
                      "phases[1].set.model.global_rope_theta", "RoPE bases belong to modernbert");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n")), "phases[1]", "exactly one of steps or tokens");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    tokens: 5\n")), "phases[1]",
                      "exactly one of steps or tokens");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: a\n    steps: 5\n")), "phases[1].name", "'a' names two phases");
  EXPECT_CONFIG_ERROR(load(with_phase("  - steps: 5\n")), "phases[1].name", "needs a name");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    step: 5\n")), "phases[1].step", "p.yaml:5",
                      "did you mean 'steps'");
  EXPECT_CONFIG_ERROR(load(with_phase("  - name: b\n    steps: 5\n    optimizer: keep\n")),
                      "phases[1].optimizer", "expected one of carry, reset");
  EXPECT_CONFIG_ERROR(load("phases: {name: a}\n"), "phases", "expected a list");
}

TEST(Phases, RopeBasesMayChangeForModernBert) {
  const auto run = load("model:\n  architecture: modernbert\n  global_rope_theta: 10000.0\n  max_position_embeddings: 8192\n" +
                        with_phase("  - name: long\n    steps: 5\n    set: {model.global_rope_theta: 160000.0, "
                                   "data.seq_len: 1024}\n"));
  EXPECT_EQ(phase_config(run, 0).model.global_rope_theta, 10000.0);
  EXPECT_EQ(phase_config(run, 1).model.global_rope_theta, 160000.0);
}

}  // namespace
}  // namespace mlm::config

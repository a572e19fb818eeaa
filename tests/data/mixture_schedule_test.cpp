// A mixture scheduled by phase: weights from sizes (data.temperature), sources left out and
// added (data.source_weights), the sizes' cache, the shares realised per phase on sources of
// sizes 100 : 10 : 1, a source that runs out, exact resume, another world size, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data/sequence_checks.h"
#include "mlm/config/config_loader.h"
#include "mlm/config/phases.h"
#include "mlm/config/run_config.h"
#include "mlm/config/validate.h"
#include "mlm/data/mixture/mixture_source.h"
#include "mlm/data/mixture/mixture_weights.h"
#include "mlm/data/open_sequences.h"
#include "mlm/data/seeded_random.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data::mixture_schedule_test {  // its own: the tests build as unity files
namespace {

using mlm::testing::take;
using mlm::testing::expect_same;

using config::resolve_data_plan;
using mlm::testing::fixture_tokenizer;
using mlm::testing::make_temp_dir;

// `documents` documents of 3 lines of 8 words drawn by `seed`: one language's text per source.
// The words are the same for every source (those the fixture tokenizer knows), so that the
// sizes in tokens follow the document counts.
std::string write_language(const std::filesystem::path& dir, const std::string& name, size_t documents,
                           uint64_t seed) {
  static const char* const kWords[12] = {"the", "baker", "repaired", "a",   "box",     "of",
                                         "books", "near", "old",      "station", "river", "day"};
  SeededRandom rng(mix_seed({seed, 0x6C616E67ull}));
  const auto path = (dir / (name + ".txt")).string();
  std::ofstream out(path);
  for (size_t d = 0; d < documents; ++d) {
    for (int l = 0; l < 3; ++l) {
      for (int w = 0; w < 8; ++w) out << (w ? " " : "") << kWords[rng.below(12)];
      out << ".\n";
    }
    out << "\n";
  }
  return path;
}

struct Languages {
  std::filesystem::path dir = make_temp_dir("mixture_schedule");
  std::vector<std::string> names = {"en", "de", "fr"};
  std::vector<std::string> files = {write_language(dir, "en", 1500, 0), write_language(dir, "de", 150, 1),
                                    write_language(dir, "fr", 15, 2)};

  config::RunConfig config(const std::string& run = "run") const {
    config::RunConfig c;
    for (size_t s = 0; s < files.size(); ++s) c.data.sources.push_back({{files[s]}, 1.0, "", names[s]});
    c.data.valid_fraction = 0.05;
    c.data.seq_len = 48;
    c.data.shuffle_buffer = 16;
    c.data.num_workers = 1;
    c.data.prefetch_sequences = 8;
    c.train.seed = 11;
    c.train.micro_batch_size = 3;
    c.train.output_dir = (dir / run).string();
    return c;
  }
};

const Languages& languages() {
  static const Languages l;
  return l;
}

// Three phases annealing the temperature 1 -> 0.7 -> 0.3, as mmBERT anneals it.
config::RunConfig annealed(const std::string& run) {
  config::RunConfig c = languages().config(run);
  for (const char* alpha : {"1.0", "0.7", "0.3"}) {
    config::PhaseConfig phase;
    phase.name = std::string("alpha ") + alpha;
    phase.steps = 10;
    phase.set.entries = {{"data.temperature", alpha}};
    c.phases.push_back(phase);
  }
  return c;
}

TEST(MixtureSchedule, RealisedSharesHoldTheTemperaturesTargetInEveryPhase) {
  const auto run = annealed("annealed");
  config::validate_phases(run, "test");
  const auto sizes = source_token_counts(resolve_data_plan(run), fixture_tokenizer());
  // The generated sources are 100 : 10 : 1 in tokens.
  EXPECT_NEAR(static_cast<double>(sizes[0]) / static_cast<double>(sizes[1]), 10, 1);
  EXPECT_NEAR(static_cast<double>(sizes[1]) / static_cast<double>(sizes[2]), 10, 2);
  constexpr int64_t kPositions = 300000;
  for (int64_t p = 0; p < config::phase_count(run); ++p) {
    const auto plan = resolve_data_plan(config::phase_config(run, p));
    const double alpha = plan.data.temperature;
    const auto weights = mixture_weights(plan, fixture_tokenizer());
    double total = 0;
    for (size_t s = 0; s < sizes.size(); ++s) {
      EXPECT_EQ(weights[s], std::pow(static_cast<double>(sizes[s]), alpha)) << "alpha " << alpha;
      total += weights[s];
    }
    // The source draws with these weights...
    MixtureSource source(plan, fixture_tokenizer(), Split::train);
    EXPECT_EQ(source.resume_state()["weights"], nlohmann::json(weights));
    // ...and over the phase's positions the shares are the targets within five standard
    // deviations of a binomial count, which is within 1 % (absolute) here.
    const auto cumulative = cumulative_weights(weights);
    std::vector<int64_t> drawn(weights.size(), 0);
    for (int64_t g = 0; g < kPositions; ++g) ++drawn[mixture_draw(plan.seed, g, cumulative)];
    for (size_t s = 0; s < weights.size(); ++s) {
      const double target = weights[s] / total;
      const double bound = 5 * std::sqrt(target * (1 - target) / kPositions);
      ASSERT_LT(bound, 0.01);
      EXPECT_NEAR(static_cast<double>(drawn[s]) / kPositions, target, bound)
          << "alpha " << alpha << ", source " << s;
    }
  }
}

TEST(MixtureSchedule, SizesAreCountedOnceAndAgainForAChangedFile) {
  const auto dir = make_temp_dir("mixture_sizes");
  const auto small = write_language(dir, "small", 5, 2);
  config::RunConfig c = languages().config();
  c.data.sources = {{{languages().files[1]}, 1.0, "", "de"}, {{small}, 1.0, "", "small"}};
  c.data.temperature = 0.5;
  c.train.output_dir = (dir / "run").string();
  const auto plan = resolve_data_plan(c);
  const auto counted = source_token_counts(plan, fixture_tokenizer());
  const auto cache_path = dir / "run" / "mixture_sizes.json";
  ASSERT_TRUE(std::filesystem::exists(cache_path));
  // A second count reads the cache: a planted value comes back.
  nlohmann::json cache;
  std::ifstream(cache_path) >> cache;
  ASSERT_EQ(cache.size(), 2u);
  for (auto& [key, tokens] : cache.items()) tokens = tokens.get<int64_t>() + 1000;
  std::ofstream(cache_path) << cache.dump();
  const auto cached = source_token_counts(plan, fixture_tokenizer());
  EXPECT_EQ(cached[0], counted[0] + 1000);
  EXPECT_EQ(cached[1], counted[1] + 1000);
  // A changed file is counted again; the other source keeps its cached count.
  write_language(dir, "small", 6, 2);
  const auto recounted = source_token_counts(plan, fixture_tokenizer());
  EXPECT_EQ(recounted[0], counted[0] + 1000);
  EXPECT_GT(recounted[1], counted[1]);
  EXPECT_LT(recounted[1], counted[1] + 1000);
}

TEST(MixtureSchedule, ASourceThatRunsOutStartsItsNextEpochAndKeepsItsShare) {
  // fr holds a few sequences; at alpha 0.3 it is drawn ~14 % of the time, so it runs out
  // many times over: each time its next epoch follows (its own stream, epochs back to back),
  // and the shares stay the draws'.
  auto c = languages().config("runs_out");
  c.data.temperature = 0.3;
  const auto plan = resolve_data_plan(c);
  constexpr size_t kPositions = 800;
  MixtureSource mixture(plan, fixture_tokenizer(), Split::train);
  const auto got = take(mixture, kPositions);
  std::vector<std::unique_ptr<StreamingDataset>> alone;
  for (size_t s = 0; s < 3; ++s) {
    auto single = c;
    single.data.sources.clear();
    single.data.temperature = 0;
    single.data.train_files = {languages().files[s]};
    alone.push_back(std::make_unique<StreamingDataset>(resolve_data_plan(single), fixture_tokenizer(), Split::train));
  }
  const auto cumulative = cumulative_weights(mixture_weights(plan, fixture_tokenizer()));
  std::vector<int64_t> used(3, 0);
  for (size_t g = 0; g < kPositions; ++g) {
    const size_t s = mixture_draw(plan.seed, static_cast<int64_t>(g), cumulative);
    PackedSequence want;
    ASSERT_TRUE(alone[s]->next(want));
    ASSERT_EQ(got[g].ids, want.ids) << "position " << g << " (source " << s << ")";
    ++used[s];
  }
  EXPECT_GE(alone[2]->epoch(), 3) << "fr ran out " << alone[2]->epoch() << " times in " << used[2] << " draws";
  EXPECT_EQ(mixture.resume_state()["sources"][2]["next"], used[2]);
}

// Phase one leaves fr out (a source that enters later) at alpha 0.5.
config::RunConfig without_fr(const std::string& run) {
  auto c = languages().config(run);
  c.data.temperature = 0.5;
  c.data.source_weights.entries = {{"fr", "0"}};
  return c;
}

TEST(MixtureSchedule, ASourceOfWeightZeroIsNeitherOpenedNorDrawnAndResumeIsExact) {
  const auto c = without_fr("zero");
  config::validate_config(c);
  MixtureSource reference(resolve_data_plan(c), fixture_tokenizer(), Split::train);
  const auto ref = take(reference, 160);
  const auto state = reference.resume_state();
  EXPECT_EQ(state["weights"][2], 0.0);
  EXPECT_EQ(state["sources"][2]["next"], 0);
  EXPECT_TRUE(state["sources"][2]["state"].is_null());
  for (size_t stop : {0, 1, 7, 60, 130}) {
    MixtureSource first(resolve_data_plan(c), fixture_tokenizer(), Split::train);
    take(first, stop);
    const auto saved = nlohmann::json::parse(first.resume_state().dump());
    MixtureSource resumed(resolve_data_plan(c), fixture_tokenizer(), Split::train, &saved);
    expect_same(take(resumed, 30), std::vector<PackedSequence>(ref.begin() + stop, ref.begin() + stop + 30),
                "resumed after " + std::to_string(stop));
  }
}

TEST(MixtureSchedule, ContinuesOnAnotherWorldSizeAtAStepBoundary) {
  // Two ranks of micro-batch 3 stop after 7 steps (42 positions); three ranks of micro-batch
  // 2 (the same global batch) go on: together exactly the single process's positions 42...
  const auto c = without_fr("reshard");
  MixtureSource single(resolve_data_plan(c), fixture_tokenizer(), Split::train);
  const auto all = take(single, 42 + 60);
  std::vector<nlohmann::json> saved;
  for (int rank = 0; rank < 2; ++rank) {
    MixtureSource shard(resolve_data_plan(c, rank, 2), fixture_tokenizer(), Split::train);
    take(shard, 21);
    saved.push_back(nlohmann::json::parse(shard.resume_state().dump()));
  }
  for (int rank = 0; rank < 3; ++rank) {
    const auto position = reshard_position(saved, rank, 3);
    MixtureSource shard(resolve_data_plan(c, rank, 3), fixture_tokenizer(), Split::train, &position);
    std::vector<PackedSequence> want;
    for (size_t g = 42; g < all.size(); ++g) {
      if (static_cast<int>(g % 3) == rank) want.push_back(all[g]);
    }
    expect_same(take(shard, want.size()), want, "rank " + std::to_string(rank) + " of 3");
  }
}

void expect_config_error(const config::RunConfig& c, const std::string& key, const std::string& part) {
  try {
    config::validate_config(c);
    ADD_FAILURE() << "not refused: " << key;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

TEST(MixtureSchedule, BadInputIsRefusedNamingTheKey) {
  auto c = languages().config();
  c.data.temperature = -0.3;
  EXPECT_THROW(config::validate_config(c), ConfigError);
  expect_config_error(c, "data.temperature", "must be a finite number > 0");
  c.data.temperature = std::nan("");
  expect_config_error(c, "data.temperature", "data.temperature (nan)");

  c = languages().config();
  c.data.source_weights.entries = {{"en", "0"}, {"de", "0"}, {"fr", "0"}};
  EXPECT_THROW(config::validate_config(c), ConfigError);
  expect_config_error(c, "data.source_weights", "sum to 0");
  c.data.source_weights.entries = {{"es", "1"}};
  expect_config_error(c, "data.source_weights.es", "no source is named 'es' (data.sources: en, de, fr)");
  c.data.source_weights.entries = {{"de", "-1"}};
  expect_config_error(c, "data.source_weights.de", "must be a finite number >= 0");
  c.data.source_weights.entries = {{"de", "lots"}};
  expect_config_error(c, "data.source_weights.de", "expected");

  c = languages().config();
  c.data.sources[2].name = "de";
  expect_config_error(c, "data.sources[2].name", "'de' names two sources");
  c.data.sources[2].name = "fr/x";
  expect_config_error(c, "data.sources[2].name", "contains '/'");

  c = languages().config();
  c.data.sources.clear();
  c.data.train_files = {languages().files[0]};
  c.data.temperature = 0.5;
  expect_config_error(c, "data.temperature", "without data.sources");

  // A phase naming an unknown source: the phase's key, through the loader as a file gives it.
  const std::string yaml =
      "data:\n  sources:\n    - {name: en, files: [" + languages().files[0] + "]}\n"
      "    - {name: de, files: [" + languages().files[1] + "]}\n"
      "phases:\n  - {name: one, steps: 2, set: {data.source_weights: {de: 0}}}\n"
      "  - {name: two, steps: 2, set: {data.source_weights: {es: 1}}}\n";
  try {
    config::load_config_from_string(yaml, "mix.yaml");
    ADD_FAILURE() << "a phase naming an unknown source was not refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "phases[1].set.data.source_weights.es") << e.what();
    EXPECT_NE(std::string(e.what()).find("mix.yaml"), std::string::npos) << e.what();
  }
  EXPECT_THROW(config::load_config_from_string(yaml, "mix.yaml"), ConfigError);
}

TEST(MixtureSchedule, AnEmptySourceIsRefusedNamingIt) {
  const auto dir = make_temp_dir("mixture_empty");
  const auto empty = (dir / "empty.txt").string();
  std::ofstream(empty) << "\n\n";
  auto c = languages().config();
  c.data.sources[1].files = {empty};
  c.data.temperature = 0.7;
  c.train.output_dir = (dir / "run").string();
  try {
    MixtureSource source(resolve_data_plan(c), fixture_tokenizer(), Split::train);
    ADD_FAILURE() << "an empty source was not refused";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data.sources[1] ('de'): its train split has no token"),
              std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(empty), std::string::npos) << e.what();
  }
  EXPECT_THROW(MixtureSource(resolve_data_plan(c), fixture_tokenizer(), Split::train), DataError);
  // Without a temperature nothing is counted up front: the first draw of the source finds it
  // empty, naming its file.
  c.data.temperature = 0;
  MixtureSource lazy(resolve_data_plan(c), fixture_tokenizer(), Split::train);
  try {
    take(lazy, 50);
    ADD_FAILURE() << "an empty source was drawn from";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(empty), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mlm::data::mixture_schedule_test

// MixtureSource over text sources: each source's share of the positions, each source's own
// order (a small source wraps and repeats, a big one does not), N ranks x B == 1 x N*B,
// exact resume and the refusal of a changed mixture, and the valid split.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "data/sequence_checks.h"
#include "mlm/config/run_config.h"
#include "mlm/data/mixture/mixture_source.h"
#include "mlm/data/seeded_random.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data {
namespace {

using mlm::testing::take;
using mlm::testing::expect_same;

using mlm::testing::fixture_tokenizer;
using mlm::testing::make_temp_dir;
using config::resolve_data_plan;

// Documents of 2..4 lines of random words; a line is unique with near certainty (8 words of
// 24), so no two sources, and no two places of one source's epoch, pack the same sequence.
std::string write_mixture_corpus(const std::filesystem::path& dir, const std::string& name,
                                 size_t documents, uint64_t seed) {
  static const char* const kWords[] = {
      "the",    "baker",   "repaired", "a",       "box",    "of",     "books",  "near",
      "old",    "station", "river",    "kitchen", "window", "after",  "long",   "day",
      "mother", "carried", "broken",   "clock",   "lake",   "young",  "museum", "winter"};
  SeededRandom rng(mix_seed({seed, 0x636F72707573ull}));  // seeds 11 and 12 apart, not shifted
  const auto path = (dir / name).string();
  std::ofstream out(path);
  for (size_t d = 0; d < documents; ++d) {
    const uint64_t lines = 2 + rng.below(3);
    for (uint64_t l = 0; l < lines; ++l) {
      for (int w = 0; w < 8; ++w) out << (w ? " " : "") << kWords[rng.below(24)];
      out << ".\n";
    }
    out << "\n";
  }
  return path;
}

struct MixtureFixture {
  std::filesystem::path dir = make_temp_dir("mixture");
  // Big (a few hundred sequences an epoch), small (a few) and medium.
  std::vector<std::string> files = {write_mixture_corpus(dir, "big.txt", 400, 11),
                                    write_mixture_corpus(dir, "small.txt", 8, 12),
                                    write_mixture_corpus(dir, "medium.txt", 60, 13)};
  std::vector<double> weights = {0.5, 0.2, 0.3};

  config::RunConfig config() const {
    config::RunConfig c;
    for (size_t s = 0; s < files.size(); ++s) c.data.sources.push_back({{files[s]}, weights[s], ""});
    c.data.valid_fraction = 0.1;
    c.data.seq_len = 48;
    c.data.shuffle_buffer = 16;
    c.data.num_workers = 2;
    c.data.prefetch_sequences = 8;
    c.train.seed = 7;
    return c;
  }
  /// The run's settings with source s alone, as a plain streaming corpus.
  config::RunConfig single(size_t s) const {
    config::RunConfig c = config();
    c.data.sources.clear();
    c.data.train_files = {files[s]};
    return c;
  }
};

const MixtureFixture& fixture() {
  static const MixtureFixture f;
  return f;
}

bool same_content(const PackedSequence& a, const PackedSequence& b) {
  return a.ids == b.ids && a.token_type_ids == b.token_type_ids && a.nsp_label == b.nsp_label;
}

/// Each source's own stream (rank 0 of 1), its first n sequences.
std::vector<std::vector<PackedSequence>> source_streams(size_t n) {
  std::vector<std::vector<PackedSequence>> out;
  for (size_t s = 0; s < fixture().files.size(); ++s) {
    StreamingDataset stream(resolve_data_plan(fixture().single(s)), fixture_tokenizer(),
                            Split::train);
    out.push_back(take(stream, n));
  }
  return out;
}

TEST(MixtureSource, SharesFollowTheWeightsAndEachSourceKeepsItsOrder) {
  constexpr size_t kPositions = 600;
  MixtureSource mixture(resolve_data_plan(fixture().config()), fixture_tokenizer(), Split::train);
  const auto got = take(mixture, kPositions);
  ASSERT_EQ(got.size(), kPositions);
  const auto streams = source_streams(kPositions);

  // Attribute every sequence to the one source whose next sequence it is: each source's
  // sequences come in that source's own order, none lost, none repeated out of turn.
  std::vector<size_t> used(streams.size(), 0);
  std::vector<std::vector<PackedSequence>> per_source(streams.size());
  std::vector<double> cumulative;
  double total = 0;
  for (double w : fixture().weights) cumulative.push_back(total += w);
  for (size_t g = 0; g < got.size(); ++g) {
    ASSERT_EQ(got[g].sample_id, g);
    std::vector<size_t> matches;
    for (size_t s = 0; s < streams.size(); ++s) {
      if (same_content(got[g], streams[s][used[s]])) matches.push_back(s);
    }
    ASSERT_EQ(matches.size(), 1u) << "position " << g << " is the next sequence of "
                                  << matches.size() << " sources";
    EXPECT_EQ(matches[0], mixture_draw(7, static_cast<int64_t>(g), cumulative));
    per_source[matches[0]].push_back(got[g]);
    ++used[matches[0]];
  }
  // Shares within 5 binomial standard deviations.
  for (size_t s = 0; s < streams.size(); ++s) {
    const double p = fixture().weights[s] / total;
    const double mean = p * kPositions, sigma = std::sqrt(kPositions * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(used[s]), mean, 5 * sigma) << "source " << s;
  }
  // Epochs are per source: the small one has wrapped around (and repeats its sequences),
  // the big one is still in its first pass (all distinct).
  const auto distinct = [](const std::vector<PackedSequence>& seqs) {
    std::set<std::vector<int32_t>> ids;
    for (const auto& s : seqs) ids.insert(s.ids);
    return ids.size();
  };
  EXPECT_EQ(distinct(per_source[0]), per_source[0].size());
  EXPECT_LT(distinct(per_source[1]) * 4, per_source[1].size());
  EXPECT_EQ(mixture.epoch(), 0);  // the first (big) source's
  EXPECT_EQ(mixture.counters().sequences, static_cast<int64_t>(kPositions));
}

TEST(MixtureSource, DrawSharesOverManyPositions) {
  // The draw alone, over many positions: tight 5-sigma bounds, including a tiny weight.
  const std::vector<double> weights = {3.0, 0.05, 1.0, 0.95};
  std::vector<double> cumulative;
  double total = 0;
  for (double w : weights) cumulative.push_back(total += w);
  constexpr int64_t kDraws = 200000;
  std::vector<int64_t> counts(weights.size(), 0);
  for (int64_t g = 0; g < kDraws; ++g) ++counts[mixture_draw(42, g, cumulative)];
  for (size_t s = 0; s < weights.size(); ++s) {
    const double p = weights[s] / total;
    EXPECT_NEAR(static_cast<double>(counts[s]), p * kDraws, 5 * std::sqrt(kDraws * p * (1 - p)))
        << "source " << s;
  }
  // Another seed, another draw.
  int64_t differ = 0;
  for (int64_t g = 0; g < 1000; ++g) differ += mixture_draw(42, g, cumulative) != mixture_draw(43, g, cumulative);
  EXPECT_GT(differ, 300);
}

TEST(MixtureSource, NRanksSeeExactlyTheSingleProcessStream) {
  constexpr size_t kSteps = 40, kBatch = 3;
  for (int world : {2, 3}) {
    MixtureSource single(resolve_data_plan(fixture().config()), fixture_tokenizer(), Split::train);
    const auto all = take(single, kSteps * kBatch * world);
    for (int rank = 0; rank < world; ++rank) {
      MixtureSource shard(resolve_data_plan(fixture().config(), rank, world), fixture_tokenizer(),
                          Split::train);
      const auto got = take(shard, kSteps * kBatch);
      std::vector<PackedSequence> want;
      for (const auto& s : all) {
        if (static_cast<int>(s.sample_id % world) == rank) want.push_back(s);
      }
      expect_same(got, want, "rank " + std::to_string(rank) + " of " + std::to_string(world));
    }
  }
}

TEST(MixtureSource, ResumesExactlyAtAnyPoint) {
  constexpr size_t kAfter = 25;
  for (int world : {1, 3}) {
    const int rank = world - 1;
    MixtureSource reference(resolve_data_plan(fixture().config(), rank, world), fixture_tokenizer(),
                            Split::train);
    const auto ref = take(reference, 140 + kAfter);
    for (size_t stop : {0, 1, 2, 5, 13, 34, 77, 140}) {
      MixtureSource first(resolve_data_plan(fixture().config(), rank, world), fixture_tokenizer(),
                          Split::train);
      take(first, stop);
      // Through text, as a checkpoint stores it.
      const auto state = nlohmann::json::parse(first.resume_state().dump());
      EXPECT_EQ(state["kind"], "mixture");
      MixtureSource resumed(resolve_data_plan(fixture().config(), rank, world), fixture_tokenizer(),
                            Split::train, &state);
      EXPECT_EQ(resumed.counters().sequences, static_cast<int64_t>(stop));
      const auto got = take(resumed, kAfter);
      expect_same(got, std::vector<PackedSequence>(ref.begin() + stop, ref.begin() + stop + kAfter),
                  "world " + std::to_string(world) + ", resumed after " + std::to_string(stop));
    }
  }
}

TEST(MixtureSource, RefusesAChangedMixture) {
  MixtureSource first(resolve_data_plan(fixture().config()), fixture_tokenizer(), Split::train);
  take(first, 10);
  const auto state = first.resume_state();
  const auto& tok = fixture_tokenizer();
  const auto expect_refused = [&](const config::RunConfig& c, const std::string& part, int rank = 0,
                                  int world = 1, const nlohmann::json* s = nullptr) {
    try {
      MixtureSource reopened(resolve_data_plan(c, rank, world), tok, Split::train, s ? s : &state);
      ADD_FAILURE() << "not refused: " << part;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  auto reweighted = fixture().config();
  reweighted.data.sources[1].weight = 0.25;
  expect_refused(reweighted, "data.sources: the data position was saved for a mixture of 3 "
                             "sources with weights [0.5, 0.2, 0.3], this run has 3 with weights "
                             "[0.5, 0.25, 0.3]");
  auto fewer = fixture().config();
  fewer.data.sources.pop_back();
  expect_refused(fewer, "this run has 2 with weights [0.5, 0.2]");
  expect_refused(fixture().config(), "cannot resume rank 0 of 2", 0, 2);
  StreamingDataset text(resolve_data_plan(fixture().single(0)), tok, Split::train);
  const auto text_state = text.resume_state();
  expect_refused(fixture().config(), "the saved data position is of a 'text' source", 0, 1,
                 &text_state);
  try {
    MixtureSource reopened(resolve_data_plan(reweighted, 0, 1), tok, Split::train, &state);
    ADD_FAILURE() << "changed weights not refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "data.sources");
  }
  // A position that is not one of this rank's is bad data, not a changed mixture.
  auto broken = state;
  broken["samples"] = 11;
  EXPECT_THROW(
      MixtureSource(resolve_data_plan(fixture().config(), 0, 1), tok, Split::train, &broken),
      DataError);
}

TEST(MixtureSource, ValidSplitIsTheSourcesHeldOutSharesInOrder) {
  const auto& tok = fixture_tokenizer();
  std::vector<PackedSequence> want;
  for (size_t s = 0; s < fixture().files.size(); ++s) {
    StreamingDataset valid(resolve_data_plan(fixture().single(s)), tok, Split::valid);
    for (auto& seq : take(valid, SIZE_MAX)) {
      seq.sample_id = want.size();
      want.push_back(seq);
    }
  }
  ASSERT_GT(want.size(), 6u);
  auto one = open_mixture_sequences(resolve_data_plan(fixture().config()), tok, Split::valid);
  expect_same(take(*one, SIZE_MAX), want, "valid, one rank");
  EXPECT_EQ(one->counters().sequences, static_cast<int64_t>(want.size()));
  for (int rank = 0; rank < 2; ++rank) {
    MixtureSource shard(resolve_data_plan(fixture().config(), rank, 2), tok, Split::valid);
    std::vector<PackedSequence> mine;
    for (const auto& s : want) {
      if (static_cast<int>(s.sample_id % 2) == rank) mine.push_back(s);
    }
    // Stopped halfway and resumed.
    const size_t stop = (want.size() / 2) / 2;
    auto got = take(shard, stop);
    const auto state = nlohmann::json::parse(shard.resume_state().dump());
    MixtureSource resumed(resolve_data_plan(fixture().config(), rank, 2), tok, Split::valid,
                          &state);
    for (const auto& s : take(resumed, SIZE_MAX)) got.push_back(s);
    expect_same(got, mine, "valid, rank " + std::to_string(rank) + " of 2");
  }
}

TEST(MixtureSource, ValidFilesAreTheirStreamingValidSplit) {
  const auto& tok = fixture_tokenizer();
  auto c = fixture().config();
  c.data.valid_files = {fixture().files[2]};
  StreamingDataset direct(resolve_data_plan(c), tok, Split::valid);
  const auto want = take(direct, SIZE_MAX);
  ASSERT_FALSE(want.empty());
  auto mixed = open_mixture_sequences(resolve_data_plan(c), tok, Split::valid);
  expect_same(take(*mixed, SIZE_MAX), want, "data.valid_files");
  EXPECT_EQ(mixed->resume_state()["kind"], "text");
}

}  // namespace
}  // namespace mlm::data

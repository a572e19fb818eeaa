// PreparedDataset: an epoch covers the table once, N ranks x B equal 1 x N*B, a resumed
// dataset continues exactly and refuses what it cannot continue, a rank reads about 1/N of
// the store, NSP/SOP pairs are cut at sentence ends and labelled half the time, a valid pass
// gives each sequence once across ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "data/sequence_checks.h"
#include "data/sentence_corpus.h"
#include "data/store_fixture.h"
#include "mlm/config/run_config.h"
#include "mlm/data/store/prepared_dataset.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data::prepared_dataset_test {

using mlm::testing::fixture_tokenizer;
using mlm::testing::take;
using Ids = std::vector<int32_t>;
using config::resolve_data_plan;

class PreparedDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = mlm::testing::make_temp_dir("prepared_dataset");
    corpus_ = mlm::testing::write_sentence_corpus(dir_, "corpus.txt", fixture_tokenizer(), 400, 21);
    store_ = write("store", corpus_.docs, 3);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::vector<mlm::testing::StoreDocument>& docs, size_t shards) {
    mlm::testing::StoreSplit split;
    for (size_t i = 0; i < shards; ++i) {
      const size_t from = docs.size() * i / shards, to = docs.size() * (i + 1) / shards;
      split.shards.emplace_back(docs.begin() + static_cast<ptrdiff_t>(from), docs.begin() + static_cast<ptrdiff_t>(to));
    }
    mlm::testing::StoreFixture f;
    f.fingerprint = tokenizer_fingerprint(fixture_tokenizer());
    mlm::testing::write_store(dir_ / name, f, split, split);
    return (dir_ / name).string();
  }

  config::RunConfig config(int64_t micro_batch = 4, config::Objective objective = config::Objective::mlm) const {
    config::RunConfig c;
    c.data.store = store_;
    c.data.seq_len = 48;
    c.train.micro_batch_size = micro_batch;
    c.train.seed = 5;
    c.model.objective = objective;
    return c;
  }

  std::filesystem::path dir_;
  mlm::testing::SentenceCorpus corpus_;
  std::string store_;
};

void expect_same(const PackedSequence& a, const PackedSequence& b, const std::string& where) {
  EXPECT_EQ(a.ids, b.ids) << where;
  EXPECT_EQ(a.token_type_ids, b.token_type_ids) << where;
  EXPECT_EQ(a.nsp_label, b.nsp_label) << where;
  EXPECT_EQ(a.sample_id, b.sample_id) << where;
}

TEST_F(PreparedDatasetTest, AnEpochCoversEveryTableSequenceOnce) {
  for (int64_t B : {1, 4, 7}) {
    PreparedDataset ds(resolve_data_plan(config(B)), fixture_tokenizer(), Split::train);
    const int64_t M = ds.prepared().size();
    std::multiset<Ids> want, got;
    PackedSequence s;
    for (int64_t i = 0; i < M; ++i) {
      ds.prepared().read(i, 0, s);
      want.insert(s.ids);
    }
    for (const auto& seq : take(ds, static_cast<size_t>(M))) got.insert(seq.ids);
    EXPECT_EQ(got, want) << "B = " << B;
    EXPECT_EQ(ds.epoch(), 1);
    // The next epoch starts over in another order.
    const auto second = take(ds, static_cast<size_t>(M));
    std::multiset<Ids> again;
    for (const auto& seq : second) again.insert(seq.ids);
    EXPECT_EQ(again, want);
    EXPECT_EQ(second.front().sample_id, static_cast<uint64_t>(M));
  }
}

TEST_F(PreparedDatasetTest, MlmSequencesEndAtSentenceEnds) {
  PreparedDataset ds(resolve_data_plan(config()), fixture_tokenizer(), Split::train);
  const auto ids = fixture_tokenizer().vocab().ids;
  for (const auto& s : take(ds, 500)) {
    ASSERT_GE(s.ids.size(), 3u);
    EXPECT_LE(s.ids.size(), 48u);
    EXPECT_EQ(s.ids.front(), ids.cls);
    EXPECT_EQ(s.ids.back(), ids.sep);
    // No line is longer than a sequence here, so each sequence ends with a line's ".".
    EXPECT_EQ(s.ids[s.ids.size() - 2], corpus_.dot);
  }
}

// Global micro-batch t of 1 x N*B is the concatenation of micro-batch t of ranks 0..N-1.
void expect_ranks_equal_single(const config::RunConfig& single_config, const config::RunConfig& rank_config,
                               int N, int64_t B, int64_t steps) {
  PreparedDataset single(resolve_data_plan(single_config), fixture_tokenizer(), Split::train);
  std::vector<std::unique_ptr<PreparedDataset>> ranks;
  for (int r = 0; r < N; ++r) {
    ranks.push_back(std::make_unique<PreparedDataset>(resolve_data_plan(rank_config, r, N),
                                                      fixture_tokenizer(), Split::train));
  }
  for (int64_t t = 0; t < steps; ++t) {
    const auto global = take(single, static_cast<size_t>(N * B));
    for (int r = 0; r < N; ++r) {
      const auto mine = take(*ranks[static_cast<size_t>(r)], static_cast<size_t>(B));
      for (int64_t i = 0; i < B; ++i) {
        expect_same(mine[static_cast<size_t>(i)], global[static_cast<size_t>(r * B + i)],
                    "N " + std::to_string(N) + " step " + std::to_string(t) + " rank " + std::to_string(r));
      }
    }
  }
}

TEST_F(PreparedDatasetTest, NRanksTimesBEqualOneTimesNB) {
  for (auto objective : {config::Objective::mlm, config::Objective::nsp}) {
    for (int N : {1, 2, 4}) {
      const int64_t B = 3;
      auto single = config(N * B, objective), ranked = config(B, objective);
      const int64_t M =
          PreparedDataset(resolve_data_plan(single), fixture_tokenizer(), Split::train)
              .prepared()
              .size();
      // Past two epoch ends (M is not a multiple of N*B here).
      expect_ranks_equal_single(single, ranked, N, B, 2 * M / (N * B) + 5);
    }
  }
}

TEST_F(PreparedDatasetTest, ResumeContinuesExactly) {
  for (auto objective : {config::Objective::mlm, config::Objective::sop}) {
    const auto c = config(3, objective);
    const int64_t M =
        PreparedDataset(resolve_data_plan(c), fixture_tokenizer(), Split::train).prepared().size();
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{5}, M / 2 + 1, M + 7}) {
      PreparedDataset ds(resolve_data_plan(c, 1, 2), fixture_tokenizer(), Split::train);
      take(ds, static_cast<size_t>(k));
      const auto state = ds.resume_state();
      EXPECT_EQ(state["kind"], "prepared");
      const int64_t epoch = ds.epoch();
      const auto counted = ds.counters().sequences;
      const auto want = take(ds, 40);
      PreparedDataset resumed(resolve_data_plan(c, 1, 2), fixture_tokenizer(), Split::train,
                              &state);
      EXPECT_EQ(resumed.epoch(), epoch) << "k " << k;
      EXPECT_EQ(resumed.counters().sequences, counted);
      const auto got = take(resumed, 40);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_same(got[i], want[i], "k " + std::to_string(k));
    }
  }
}

TEST_F(PreparedDatasetTest, ResumeRefusesWhatItCannotContinue) {
  const auto c = config(3);
  PreparedDataset ds(resolve_data_plan(c, 1, 2), fixture_tokenizer(), Split::train);
  take(ds, 5);
  const auto state = ds.resume_state();
  const auto& tok = fixture_tokenizer();
  EXPECT_THROW(PreparedDataset(resolve_data_plan(c, 0, 2), tok, Split::train, &state),
               ConfigError);  // another rank
  EXPECT_THROW(PreparedDataset(resolve_data_plan(c, 1, 3), tok, Split::train, &state),
               ConfigError);  // another world size
  auto other = c;
  other.train.micro_batch_size = 4;
  EXPECT_THROW(PreparedDataset(resolve_data_plan(other, 1, 2), tok, Split::train, &state),
               ConfigError);
  other = c;
  other.data.seq_len = 64;
  EXPECT_THROW(PreparedDataset(resolve_data_plan(other, 1, 2), tok, Split::train, &state),
               ConfigError);
  other = c;
  other.data.packing = config::Packing::tokens;
  EXPECT_THROW(PreparedDataset(resolve_data_plan(other, 1, 2), tok, Split::train, &state),
               ConfigError);
  other = c;
  other.data.store = write("other", {corpus_.docs.begin(), corpus_.docs.begin() + 100}, 1);
  EXPECT_THROW(PreparedDataset(resolve_data_plan(other, 1, 2), tok, Split::train, &state),
               DataError);
  auto text_state = state;
  text_state["kind"] = "text";
  EXPECT_THROW(PreparedDataset(resolve_data_plan(c, 1, 2), tok, Split::train, &text_state),
               ConfigError);
  auto not_mine = state;
  not_mine["samples"] = 1;  // global sequence 0 is rank 0's
  EXPECT_THROW(PreparedDataset(resolve_data_plan(c, 1, 2), tok, Split::train, &not_mine),
               DataError);
}

TEST_F(PreparedDatasetTest, ValidPassGivesEachSequenceOnceAcrossRanks) {
  const auto c = config();
  const int64_t M =
      PreparedDataset(resolve_data_plan(c), fixture_tokenizer(), Split::valid).prepared().size();
  std::set<uint64_t> seen;
  for (int r = 0; r < 3; ++r) {
    PreparedDataset ds(resolve_data_plan(c, r, 3), fixture_tokenizer(), Split::valid);
    PackedSequence s;
    while (ds.next(s)) {
      EXPECT_EQ(static_cast<int>(s.sample_id % 3), r);
      EXPECT_TRUE(seen.insert(s.sample_id).second);
    }
    EXPECT_FALSE(ds.next(s));
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), M);
  EXPECT_EQ(*seen.rbegin(), static_cast<uint64_t>(M - 1));
}

TEST_F(PreparedDatasetTest, IndexedAccessIsTheSingleRankStream) {
  const auto c = config(6);
  PreparedDataset ds(resolve_data_plan(c), fixture_tokenizer(), Split::train);
  auto indexed = open_prepared_indexed(resolve_data_plan(c), fixture_tokenizer(), Split::train);
  const int64_t M = ds.prepared().size();
  PackedSequence s;
  for (const auto& want : take(ds, static_cast<size_t>(M + 10))) {
    ASSERT_TRUE(indexed->at(static_cast<int64_t>(want.sample_id), s));
    expect_same(s, want, "g " + std::to_string(want.sample_id));
  }
  const auto state = indexed->resume_state();
  EXPECT_EQ(state["samples"], M + 10);
  auto reopened =
      open_prepared_indexed(resolve_data_plan(c), fixture_tokenizer(), Split::train, &state);
  EXPECT_EQ(reopened->epoch(), 1);
  auto valid = open_prepared_indexed(resolve_data_plan(c), fixture_tokenizer(), Split::valid);
  EXPECT_TRUE(valid->at(M - 1, s));
  EXPECT_FALSE(valid->at(M, s));
}

// NSP / SOP: A and B end at sentence ends ("."), labels are 1 half the time (within 5 sigma
// of the binomial). At seq_len 128 every line of this corpus fits beside the line before it,
// so no span is a lone sentence cut inside (at 48 some first lines are, as in streaming).
TEST_F(PreparedDatasetTest, PairsAreCutAtSentenceEndsAndLabelledHalfTheTime) {
  const auto ids = fixture_tokenizer().vocab().ids;
  for (auto objective : {config::Objective::nsp, config::Objective::sop}) {
    auto c = config(4, objective);
    c.data.seq_len = 128;
    PreparedDataset ds(resolve_data_plan(c), fixture_tokenizer(), Split::train);
    const auto seqs = take(ds, 3 * static_cast<size_t>(ds.prepared().size()));
    int64_t ones = 0;
    for (const auto& s : seqs) {
      ASSERT_EQ(s.ids.front(), ids.cls);
      ASSERT_LE(s.ids.size(), 128u);
      ASSERT_EQ(std::count(s.ids.begin(), s.ids.end(), ids.sep), 2);
      const auto sep = std::find(s.ids.begin() + 1, s.ids.end(), ids.sep) - s.ids.begin();
      ASSERT_LT(sep + 2, static_cast<ptrdiff_t>(s.ids.size())) << "A and B both non-empty";
      EXPECT_EQ(s.ids[static_cast<size_t>(sep - 1)], corpus_.dot) << "A ends at a sentence end " << ::testing::PrintToString(s.ids) << " label " << int(s.nsp_label) << " obj " << config::to_string(objective);
      EXPECT_EQ(s.token_type_ids[static_cast<size_t>(sep)], 0);
      EXPECT_EQ(s.token_type_ids[static_cast<size_t>(sep + 1)], 1);
      // A negative's B may be its first sentence cut to the room left; every other B is whole.
      if (objective == config::Objective::sop || s.nsp_label == 0) {
        EXPECT_EQ(s.ids[s.ids.size() - 2], corpus_.dot) << "B ends at a sentence end";
      }
      ones += s.nsp_label;
    }
    const double n = static_cast<double>(seqs.size());
    ASSERT_GT(n, 1000);
    EXPECT_NEAR(static_cast<double>(ones), n / 2, 5 * std::sqrt(n / 4)) << config::to_string(objective);
  }
}

// ---------------------------------------------------------------------------------------------
// Bytes per rank: 4 ranks, one epoch each, on a store of ~6M random tokens (uint16).

/// Resident bytes of this process's mappings of files under `dir` (/proc/self/smaps).
int64_t resident_bytes_under(const std::string& dir) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  int64_t rss_kb = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') != std::string::npos &&
        line.find(' ') != std::string::npos) {
      inside = line.find(dir) != std::string::npos && line.find(".tokens") != std::string::npos;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      rss_kb += std::stoll(line.substr(4));
    }
  }
  return rss_kb * 1024;
}

TEST(PreparedDatasetBytes, EachOfFourRanksReadsAboutAQuarterOfTheStore) {
  const auto dir = mlm::testing::make_temp_dir("prepared_bytes");
  // Sentences of 8..40 tokens (Wikipedia-like with a 32k vocabulary), 3..30 per document.
  SeededRandom rng(4);
  mlm::testing::StoreSplit split;
  for (int shard = 0; shard < 2; ++shard) {
    split.shards.emplace_back();
    for (int64_t tokens = 0; tokens < 3'000'000;) {
      mlm::testing::StoreDocument doc(3 + rng.below(28));
      for (auto& sentence : doc) {
        sentence.resize(8 + rng.below(33));
        for (auto& id : sentence) id = static_cast<int32_t>(5 + rng.below(190));
        tokens += static_cast<int64_t>(sentence.size());
      }
      split.shards.back().push_back(std::move(doc));
    }
  }
  mlm::testing::StoreFixture f;
  f.fingerprint = tokenizer_fingerprint(fixture_tokenizer());
  mlm::testing::write_store(dir, f, split);
  config::RunConfig c;
  c.data.store = dir.string();
  c.data.seq_len = 128;
  c.train.micro_batch_size = 8;
  int64_t store_bytes = 0, token_bytes = 0;
  {
    const PreparedStore store(dir.string(), Split::train);
    for (const auto& s : store.manifest()["splits"]["train"]["shards"]) {
      store_bytes += s["tokens_bytes"].get<int64_t>() + s["index_bytes"].get<int64_t>();
      token_bytes += s["tokens_bytes"].get<int64_t>();
    }
  }
  // The sequence table file, as mlm-data prepare leaves it: the ranks read it instead of the
  // whole index (8% of this store, whose sentences average 24 two-byte tokens).
  const int64_t built_table_bytes =
      PreparedSplit(resolve_data_plan(c), fixture_tokenizer(), Split::train).table_bytes_read();
  for (int r = 0; r < 4; ++r) {
    PreparedDataset ds(resolve_data_plan(c, r, 4), fixture_tokenizer(), Split::train);
    const int64_t M = ds.prepared().size();
    PackedSequence s;
    while (ds.global_index(ds.counters().sequences) < M) ds.next(s);
    const double share = static_cast<double>(ds.counters().bytes_read) / static_cast<double>(store_bytes);
    const double table_share = static_cast<double>(ds.prepared().table_bytes_read()) / static_cast<double>(store_bytes);
    const double resident = static_cast<double>(resident_bytes_under(dir.string())) / static_cast<double>(token_bytes);
    std::printf("[bytes] rank %d of 4: %lld sequences of %lld, read %.1f%% of the store's token+index bytes "
                "(%.1f%% the sequence table), token pages resident %.1f%%\n",
                r, static_cast<long long>(ds.counters().sequences), static_cast<long long>(M), 100 * share,
                100 * table_share, 100 * resident);
    // A quarter of the tokens, the index entries of their document boundaries, the pages
    // shared with a neighbouring rank's blocks, and the table file.
    EXPECT_LE(share, 0.30) << "rank " << r;
    EXPECT_LT(ds.prepared().table_bytes_read(), built_table_bytes / 2) << "rank " << r << " rebuilt the table";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace mlm::data::prepared_dataset_test

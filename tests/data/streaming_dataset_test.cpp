#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "data/sequence_checks.h"
#include "mlm/config/run_config.h"
#include "mlm/data/open_sequences.h"
#include "mlm/data/stream/document_stream.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/text/corpus/sentence_split.h"
#include "mlm/util/errors.h"
#include "data/stream_config.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data {
namespace {

using mlm::testing::take;
using mlm::testing::expect_same;

using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using config::resolve_data_plan;

config::RunConfig base_config() { return mlm::testing::small_stream_config({corpus_path("train.txt")}); }

std::vector<PackedSequence> take_all(StreamingDataset& ds) { return take(ds, SIZE_MAX); }

// Content tokens (no specials) of sequences, as a multiset.
std::map<int32_t, int64_t> content_tokens(const std::vector<PackedSequence>& seqs) {
  std::map<int32_t, int64_t> counts;
  for (const auto& s : seqs) {
    for (int32_t id : s.ids) {
      if (id > 4) ++counts[id];
    }
  }
  return counts;
}

int64_t count_docs(const std::string& path) {
  text::DocumentReader reader({path, text::FileFormat::text}, {});
  text::Document d;
  int64_t n = 0;
  while (reader.next(d)) ++n;
  return n;
}

// data.packing: tokens (sentence packing: sentence_packing_test.cpp).
TEST(StreamingDataset, PacksTokenChunks) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.packing = config::Packing::tokens;
  StreamingDataset ds(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take_all(ds);
  ASSERT_GT(seqs.size(), 10u);
  int64_t short_ones = 0, joined = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const auto& s = seqs[i];
    ASSERT_LE(s.ids.size(), 48u);
    EXPECT_EQ(s.ids.front(), tok.vocab().ids.cls);
    EXPECT_EQ(s.ids.back(), tok.vocab().ids.sep);
    EXPECT_EQ(s.token_type_ids, std::vector<int8_t>(s.ids.size(), 0));
    EXPECT_EQ(s.nsp_label, -1);
    EXPECT_EQ(s.sample_id, i);
    // Full, or one short where only a [SEP] before the next document would have fit.
    short_ones += s.ids.size() < 47;
    joined += std::count(s.ids.begin() + 1, s.ids.end() - 1, tok.vocab().ids.sep) > 0;
    for (size_t k = 1; k + 1 < s.ids.size(); ++k) {
      EXPECT_FALSE(s.ids[k] == tok.vocab().ids.sep && s.ids[k + 1] == tok.vocab().ids.sep);
    }
  }
  EXPECT_LE(short_ones, 1);  // only the very last one
  EXPECT_GT(joined, 0);
  // The valid split's content is exactly the valid documents' tokens.
  std::vector<PackedSequence> docs;
  text::DocumentReader reader({corpus_path("valid.txt"), text::FileFormat::text}, {});
  text::Document d;
  while (reader.next(d)) docs.push_back({tok.encode(d.text), {}, -1, 0});
  EXPECT_EQ(content_tokens(seqs), content_tokens(docs));
}

TEST(StreamingDataset, DocumentsStayApartWithoutCrossDocuments) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.cross_documents = false;
  StreamingDataset ds(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take_all(ds);
  for (const auto& s : seqs) {
    EXPECT_EQ(std::count(s.ids.begin(), s.ids.end(), tok.vocab().ids.sep), 1);
  }
  EXPECT_GE(static_cast<int64_t>(seqs.size()), count_docs(corpus_path("valid.txt")));
}

TEST(StreamingDataset, SegmentPairsForNspAndSop) {
  const auto& tok = fixture_tokenizer();
  for (auto [objective, packing] : {std::pair{config::Objective::nsp, config::Packing::sentences},
                                    std::pair{config::Objective::sop, config::Packing::sentences},
                                    std::pair{config::Objective::nsp, config::Packing::tokens},
                                    std::pair{config::Objective::sop, config::Packing::tokens}}) {
    SCOPED_TRACE(std::string(config::to_string(packing)));
    auto c = base_config();
    c.model.objective = objective;
    c.data.packing = packing;
    StreamingDataset ds(resolve_data_plan(c), tok, Split::train);
    const auto seqs = take(ds, 400);
    int64_t ones = 0;
    for (const auto& s : seqs) {
      ASSERT_LE(s.ids.size(), 48u);
      ASSERT_EQ(s.ids.size(), s.token_type_ids.size());
      EXPECT_EQ(s.ids.front(), tok.vocab().ids.cls);
      EXPECT_EQ(std::count(s.ids.begin(), s.ids.end(), tok.vocab().ids.sep), 2);
      const auto first_sep = std::find(s.ids.begin(), s.ids.end(), tok.vocab().ids.sep) - s.ids.begin();
      for (size_t k = 0; k < s.ids.size(); ++k) {
        EXPECT_EQ(s.token_type_ids[k], static_cast<int64_t>(k) <= first_sep ? 0 : 1);
      }
      EXPECT_GT(first_sep, 1);                            // A is not empty
      EXPECT_GT(static_cast<int64_t>(s.ids.size()), first_sep + 2);  // B is not empty
      ASSERT_TRUE(s.nsp_label == 0 || s.nsp_label == 1);
      ones += s.nsp_label;
    }
    // Label 1 with probability ~1/2 (NSP a bit less: no random B at an epoch end).
    // 400 draws: sd = 10; 5 sigma around 200.
    EXPECT_GT(ones, 150) << config::to_string(objective);
    EXPECT_LT(ones, 250) << config::to_string(objective);
  }
}

TEST(StreamingDataset, HeldOutSplitIsStableAndDisjoint) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.valid_files.clear();
  c.data.valid_fraction = 0.1;
  std::vector<text::CorpusFile> files = {{corpus_path("train.txt"), text::FileFormat::text}};
  auto docs_of = [&](Holdout holdout) {
    StreamOptions o;
    o.files = files;
    o.holdout = holdout;
    o.held_out_fraction = 0.1;
    DocumentStream stream(o, 0, {});
    std::vector<std::string> out;
    StreamDocument d;
    while (stream.next(d) == StreamEvent::document) out.push_back(d.text);
    return out;
  };
  const auto all = docs_of(Holdout::all);
  const auto held = docs_of(Holdout::held_out_only);
  const auto rest = docs_of(Holdout::without_held_out);
  EXPECT_EQ(held.size() + rest.size(), all.size());
  // 400 documents, p = 0.1: sd = 6; 5 sigma.
  EXPECT_GT(held.size(), 10u);
  EXPECT_LT(held.size(), 70u);
  std::set<std::string> held_set(held.begin(), held.end());
  for (const auto& d : rest) EXPECT_EQ(held_set.count(d), 0u);
  EXPECT_EQ(docs_of(Holdout::held_out_only), held);

  // The dataset's valid split: the same sequences every time, the train split lacks them.
  StreamingDataset v1(resolve_data_plan(c), tok, Split::valid);
  StreamingDataset v2(resolve_data_plan(c), tok, Split::valid);
  const auto a = take_all(v1);
  expect_same(a, take_all(v2));
  c.data.shuffle_buffer = 1;
  c.data.shuffle_files = false;
  c.data.cross_documents = false;
  StreamingDataset train(resolve_data_plan(c), tok, Split::train);
  PackedSequence s;
  int64_t train_tokens = 0, valid_tokens = 0;
  while (train.next(s) && train.epoch() == 0) {
    for (auto id : s.ids) train_tokens += id > 4;
  }
  for (const auto& seq : a) {
    for (auto id : seq.ids) valid_tokens += id > 4;
  }
  int64_t all_tokens = 0;  // sentence packing encodes each sentence (line) on its own
  for (const auto& d : all) {
    for (const auto line : text::split_sentences(d)) all_tokens += static_cast<int64_t>(tok.encode(line).size());
  }
  EXPECT_EQ(train_tokens + valid_tokens, all_tokens);
}

// Sequence-level sharding: rank r of N takes global sequences g % N == r of the one global
// stream. Over one epoch the ranks' sequences are disjoint and together exactly the epoch of
// a single process, in its order when interleaved.
TEST(StreamingDataset, RanksPartitionAnEpochExactly) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.cross_documents = false;
  c.data.valid_fraction = 0;
  StreamingDataset single(resolve_data_plan(c), tok, Split::train);
  std::vector<PackedSequence> epoch0;
  PackedSequence s;
  while (single.next(s)) {
    epoch0.push_back(s);
    if (single.epoch() > 0) break;  // that sequence closed epoch 0
  }
  const auto n = static_cast<uint64_t>(epoch0.size());
  ASSERT_GT(n, 20u);
  for (int world : {2, 3}) {
    SCOPED_TRACE("world size " + std::to_string(world));
    std::vector<std::vector<PackedSequence>> ranks(static_cast<size_t>(world));
    std::map<int32_t, int64_t> sum;
    for (int rank = 0; rank < world; ++rank) {
      StreamingDataset ds(resolve_data_plan(c, rank, world), tok, Split::train);
      while (ds.next(s) && s.sample_id < n) {
        EXPECT_EQ(s.sample_id % world, static_cast<uint64_t>(rank));
        ranks[rank].push_back(s);
      }
      EXPECT_EQ(ds.epoch(), 1) << "rank " << rank << " ran past epoch 0";
      for (const auto& [id, k] : content_tokens(ranks[rank])) sum[id] += k;
    }
    EXPECT_EQ(sum, content_tokens(epoch0));
    std::vector<PackedSequence> interleaved;
    for (uint64_t g = 0; g < n; ++g) {
      const auto& mine = ranks[g % world];
      ASSERT_LT(g / world, mine.size()) << "global sequence " << g << " is missing";
      interleaved.push_back(mine[g / world]);
    }
    size_t total = 0;
    for (const auto& r : ranks) total += r.size();
    EXPECT_EQ(total, n);
    expect_same(interleaved, epoch0);
  }
}

// The contract the data-parallel trainer relies on (N ranks x micro-batch B == one process x
// N·B): the single-process stream, dealt round-robin, is rank 0, 1, ..., N-1's streams —
// same ids, token types, labels and sample_id (so the same masks) — across epoch ends, for
// every objective and worker count.
TEST(StreamingDataset, RanksAreTheSingleStreamDealtRoundRobin) {
  const auto& tok = fixture_tokenizer();
  struct Case {
    config::Objective objective;
    int world, workers;
  };
  for (const auto& k : {Case{config::Objective::mlm, 2, 2}, Case{config::Objective::mlm, 3, 0},
                        Case{config::Objective::nsp, 2, 1}, Case{config::Objective::sop, 3, 2}}) {
    SCOPED_TRACE(std::string(config::to_string(k.objective)) + ", world " + std::to_string(k.world) + ", workers " +
                 std::to_string(k.workers));
    auto c = base_config();
    c.model.objective = k.objective;
    c.data.num_workers = k.workers;
    c.data.train_files = {corpus_path("lines.txt"), corpus_path("blocks.txt.gz"), corpus_path("docs.jsonl")};
    const size_t per_rank = 400;  // sentence-packed NSP: ~600 sequences an epoch
    StreamingDataset single(resolve_data_plan(c), tok, Split::train);
    const auto whole = take(single, per_rank * k.world);
    ASSERT_GT(single.epoch(), 0) << "the test must cross an epoch boundary";
    for (size_t g = 0; g < whole.size(); ++g) ASSERT_EQ(whole[g].sample_id, g);
    std::vector<std::vector<PackedSequence>> ranks;
    for (int rank = 0; rank < k.world; ++rank) {
      StreamingDataset ds(resolve_data_plan(c, rank, k.world), tok, Split::train);
      ranks.push_back(take(ds, per_rank));
      EXPECT_EQ(ds.counters().sequences, static_cast<int64_t>(per_rank));
    }
    std::vector<PackedSequence> dealt;
    for (size_t i = 0; i < per_rank; ++i) {
      for (const auto& r : ranks) dealt.push_back(r[i]);
    }
    expect_same(dealt, whole);
  }
}

// A run resumed on another world size: two ranks stop at a step boundary (6 global sequences
// done); three ranks continue from the boundary position reshard_position() makes, and
// together they deal the single stream's sequences from 6 on, each of its own residue class.
TEST(StreamingDataset, AStepBoundaryContinuesOnAnotherWorldSize) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  StreamingDataset single(resolve_data_plan(c), tok, Split::train);
  const auto whole = take(single, 12);
  std::vector<nlohmann::json> saved;
  for (int rank = 0; rank < 2; ++rank) {
    StreamingDataset ds(resolve_data_plan(c, rank, 2), tok, Split::train);
    take(ds, 3);
    saved.push_back(ds.resume_state());
  }
  std::vector<PackedSequence> dealt;
  std::vector<std::vector<PackedSequence>> ranks;
  for (int rank = 0; rank < 3; ++rank) {
    const auto position = DataPosition::from_json(reshard_position(saved, rank, 3));
    EXPECT_TRUE(position.step_boundary);
    StreamingDataset ds(resolve_data_plan(c, rank, 3), tok, Split::train, position);
    ranks.push_back(take(ds, 2));
  }
  for (size_t i = 0; i < 2; ++i) {
    for (const auto& r : ranks) dealt.push_back(r[i]);
  }
  expect_same(dealt, std::vector<PackedSequence>(whole.begin() + 6, whole.end()));
  // Without the flag, the same counter is no position of rank 0 of 3.
  auto unflagged = DataPosition::from_json(reshard_position(saved, 0, 3));
  unflagged.step_boundary = false;
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c, 0, 3), tok, Split::train, unflagged), DataError);
}

// Validation is sharded the same way: the ranks together evaluate the whole set once.
TEST(StreamingDataset, ValidationShardsCoverTheSetOnce) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.valid_files = {corpus_path("valid.txt"), corpus_path("docs.jsonl.gz")};
  StreamingDataset single(resolve_data_plan(c), tok, Split::valid);
  const auto whole = take_all(single);
  for (int world : {2, 3}) {
    SCOPED_TRACE("world size " + std::to_string(world));
    std::vector<std::vector<PackedSequence>> ranks;
    for (int rank = 0; rank < world; ++rank) {
      StreamingDataset ds(resolve_data_plan(c, rank, world), tok, Split::valid);
      ranks.push_back(take_all(ds));
      EXPECT_EQ(ds.counters().sequences, static_cast<int64_t>(ranks.back().size()));
    }
    std::vector<PackedSequence> dealt;
    for (size_t g = 0; g < whole.size(); ++g) {
      ASSERT_LT(g / world, ranks[g % world].size());
      dealt.push_back(ranks[g % world][g / world]);
    }
    size_t total = 0;
    for (const auto& r : ranks) total += r.size();
    EXPECT_EQ(total, whole.size());
    expect_same(dealt, whole);
  }
}

TEST(StreamingDataset, OutputDoesNotDependOnWorkerCount) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.train_files = {corpus_path("train.txt"), corpus_path("blocks.txt.gz")};
  c.data.num_workers = 0;
  StreamingDataset inline_ds(resolve_data_plan(c), tok, Split::train);
  const auto reference = take(inline_ds, 300);
  for (int workers : {1, 3}) {
    c.data.num_workers = workers;
    StreamingDataset ds(resolve_data_plan(c), tok, Split::train);
    expect_same(take(ds, 300), reference);
  }
}

// Take N, save the position (through JSON), rebuild, the next K are bit-equal: at chunk
// boundaries (shuffle_buffer 16), inside chunks, and in later epochs.
void check_resume(config::Objective objective, int workers, int rank, int world, bool cross,
                  config::Packing packing = config::Packing::sentences) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.model.objective = objective;
  c.data.packing = packing;
  c.data.num_workers = workers;
  c.data.cross_documents = cross;
  c.data.train_files = {corpus_path("lines.txt"), corpus_path("blocks.txt.gz"), corpus_path("docs.jsonl")};
  StreamingDataset full(resolve_data_plan(c, rank, world), tok, Split::train);
  const auto reference = take(full, 700);  // sentence-packed NSP: ~600 sequences an epoch
  ASSERT_GT(full.epoch(), 0) << "the test must cross an epoch boundary";
  for (size_t n : {size_t{0}, size_t{1}, size_t{16}, size_t{17}, size_t{190}, size_t{330}, size_t{590}}) {
    StreamingDataset first(resolve_data_plan(c, rank, world), tok, Split::train);
    take(first, n);
    const auto json = first.position().to_json().dump();
    StreamingDataset resumed(resolve_data_plan(c, rank, world), tok, Split::train,
                             DataPosition::from_json(nlohmann::json::parse(json)));
    const std::vector<PackedSequence> want(reference.begin() + n, reference.begin() + n + 100);
    SCOPED_TRACE("after " + std::to_string(n) + ": " + json);
    const auto got = take(resumed, 100);
    expect_same(got, want);
    for (const auto& seq : got) ASSERT_EQ(seq.sample_id % world, static_cast<uint64_t>(rank));
    EXPECT_EQ(resumed.counters().sequences, static_cast<int64_t>(n + 100));
  }
}

TEST(StreamingDatasetResume, InlineSingleRank) { check_resume(config::Objective::mlm, 0, 0, 1, true); }
TEST(StreamingDatasetResume, ThreeWorkersRank1Of2) { check_resume(config::Objective::mlm, 3, 1, 2, true); }
TEST(StreamingDatasetResume, DocumentsApart) { check_resume(config::Objective::mlm, 2, 0, 1, false); }
TEST(StreamingDatasetResume, NextSentencePairs) { check_resume(config::Objective::nsp, 2, 0, 1, true); }
TEST(StreamingDatasetResume, SentenceOrderRank2Of3) { check_resume(config::Objective::sop, 1, 2, 3, true); }
TEST(StreamingDatasetResume, TokenChunks) {
  check_resume(config::Objective::mlm, 2, 1, 2, true, config::Packing::tokens);
}
TEST(StreamingDatasetResume, TokenChunksApart) {
  check_resume(config::Objective::mlm, 0, 0, 1, false, config::Packing::tokens);
}
TEST(StreamingDatasetResume, NextSentenceTokenPairs) {
  check_resume(config::Objective::nsp, 2, 0, 1, true, config::Packing::tokens);
}
TEST(StreamingDatasetResume, SentenceOrderTokenPairs) {
  check_resume(config::Objective::sop, 1, 1, 2, true, config::Packing::tokens);
}

TEST(StreamingDataset, EpochsReshuffleAndSampleIdsStayUnique) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.train_files = {corpus_path("train.txt"), corpus_path("lines.txt"), corpus_path("docs.jsonl")};
  StreamingDataset ds(resolve_data_plan(c, 1, 2), tok, Split::train);
  std::vector<std::vector<PackedSequence>> epochs(3);
  PackedSequence s;
  std::set<uint64_t> ids;
  while (ds.epoch() < 3 && ds.next(s)) {
    if (ds.epoch() < 3) epochs[ds.epoch()].push_back(s);
    EXPECT_TRUE(ids.insert(s.sample_id).second);
    EXPECT_EQ(s.sample_id % 2, 1u);
  }
  ASSERT_FALSE(epochs[1].empty());
  // Same content, different order.
  EXPECT_NE(epochs[0].front().ids, epochs[1].front().ids);
}

TEST(StreamingDataset, ValidationIsFiniteAndFixed) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.valid_files = {corpus_path("valid.txt"), corpus_path("docs.jsonl.gz")};
  c.data.num_workers = 3;
  StreamingDataset a(resolve_data_plan(c), tok, Split::valid);
  c.train.seed = 99;  // the seed never changes validation
  c.data.num_workers = 0;
  StreamingDataset b(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take_all(a);
  expect_same(seqs, take_all(b));
  PackedSequence s;
  EXPECT_FALSE(a.next(s));
  EXPECT_EQ(a.counters().sequences, static_cast<int64_t>(seqs.size()));
  EXPECT_GT(a.counters().documents, 40);
}

class BadCorpus : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = mlm::testing::make_temp_dir("bad_corpus"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(BadCorpus, MissingFilesFailAtConstruction) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.train_files = {corpus_path("train.txt"), (dir_ / "missing.txt").string()};
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c), tok, Split::train), DataError);
  c.data.train_files = {(dir_ / "*.txt").string()};
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c), tok, Split::train), DataError);
  c.data.train_files = {dir_.string()};
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c), tok, Split::train), DataError);
  c.data.train_files = {};
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c), tok, Split::train), ConfigError);
  c.data.train_files = {corpus_path("train.txt")};
  c.data.valid_files = {};
  c.data.valid_fraction = 0;
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c), tok, Split::valid), ConfigError);
}

TEST_F(BadCorpus, EmptyCorpusIsAnError) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.train_files = {write("empty.txt", "\n\n   \n")};
  for (int workers : {0, 2}) {
    c.data.num_workers = workers;
    StreamingDataset ds(resolve_data_plan(c), tok, Split::train);
    PackedSequence s;
    EXPECT_THROW(ds.next(s), DataError);
  }
  StreamingDataset rank1(resolve_data_plan(c, 1, 2), tok, Split::train);  // empty for every rank
  PackedSequence s;
  EXPECT_THROW(rank1.next(s), DataError);
  // Fewer sequences per epoch than ranks is no error: the global counter runs on across
  // epochs, so rank 2 of 3 gets the one sequence of epoch 2.
  c.data.train_files = {write("one.txt", "just one document\n")};
  c.data.num_workers = 0;
  StreamingDataset rank2(resolve_data_plan(c, 2, 3), tok, Split::train);
  ASSERT_TRUE(rank2.next(s));
  EXPECT_EQ(s.sample_id, 2u);
  EXPECT_EQ(rank2.epoch(), 3);
  ASSERT_TRUE(rank2.next(s));
  EXPECT_EQ(s.sample_id, 5u);
}

TEST_F(BadCorpus, BadRecordsAreSkippedAndCountedOrFatal) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  c.data.valid_files = {write("v.jsonl", "{\"text\": \"the old farmer\"}\n{oops\n{\"text\": \"caf\xE9\"}\n")};
  StreamingDataset ds(resolve_data_plan(c), tok, Split::valid);
  const auto seqs = take_all(ds);
  EXPECT_EQ(seqs.size(), 1u);
  EXPECT_EQ(ds.counters().bad_records, 1);
  EXPECT_EQ(ds.counters().invalid_utf8_fixes, 1);
  c.data.on_bad_record = config::BadRecordPolicy::error;
  StreamingDataset strict(resolve_data_plan(c), tok, Split::valid);
  PackedSequence s;
  try {
    strict.next(s);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("v.jsonl:2"), std::string::npos) << e.what();
  }
}

TEST_F(BadCorpus, ResumeFromAnotherCorpusOrWorldIsRefused) {
  const auto& tok = fixture_tokenizer();
  auto c = base_config();
  StreamingDataset ds(resolve_data_plan(c, 0, 2), tok, Split::train);
  take(ds, 3);
  const auto p = ds.position();
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c, 0, 3), tok, Split::train, p), ConfigError);
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c, 1, 2), tok, Split::train, p), ConfigError);
  auto foreign = p;  // rank 0's position carrying a counter only rank 1 can stand at
  foreign.samples += 1;
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c, 0, 2), tok, Split::train, foreign), DataError);
  c.data.train_files = {corpus_path("train.txt"), corpus_path("lines.txt")};
  EXPECT_THROW(StreamingDataset(resolve_data_plan(c, 0, 2), tok, Split::train, p), DataError);
  EXPECT_THROW(DataPosition::from_json(nlohmann::json{{"epoch", 1}}), DataError);
}

}  // namespace
}  // namespace mlm::data

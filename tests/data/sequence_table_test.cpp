// The prepared store's sequence table packs as the streaming packer does: the same mlm
// sequences over the same documents, sentence and token packing, with and without
// cross_documents; a shard's end ends a sequence. And it builds fast on a 1 GB-scale store.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "data/sentence_corpus.h"
#include "data/store_fixture.h"
#include "mlm/config/run_config.h"
#include "mlm/data/store/prepared_dataset.h"
#include "mlm/data/store/sequence_table.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data::sequence_table_test {

using mlm::testing::fixture_tokenizer;
using Ids = std::vector<int32_t>;
using config::resolve_data_plan;

class SequenceTableTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = mlm::testing::make_temp_dir("sequence_table"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  mlm::testing::StoreFixture fixture() const {
    mlm::testing::StoreFixture f;
    f.fingerprint = tokenizer_fingerprint(fixture_tokenizer());
    return f;
  }

  /// A store whose valid split is `docs` cut into `shards` shards (train: the same, whole).
  std::string write(const std::string& name, const std::vector<mlm::testing::StoreDocument>& docs, size_t shards = 1) {
    mlm::testing::StoreSplit train, valid;
    train.shards.push_back(docs);
    for (size_t i = 0; i < shards; ++i) {
      const size_t from = docs.size() * i / shards, to = docs.size() * (i + 1) / shards;
      valid.shards.emplace_back(docs.begin() + static_cast<ptrdiff_t>(from), docs.begin() + static_cast<ptrdiff_t>(to));
    }
    const auto dir = dir_ / name;
    mlm::testing::write_store(dir, fixture(), train, valid);
    return dir.string();
  }

  static std::vector<Ids> all_valid(const config::RunConfig& c) {
    PreparedDataset ds(resolve_data_plan(c), fixture_tokenizer(), Split::valid);
    std::vector<Ids> out;
    PackedSequence s;
    while (ds.next(s)) out.push_back(s.ids);
    return out;
  }

  std::filesystem::path dir_;
};

TEST_F(SequenceTableTest, SentencePackingMatchesTheStreamingPacker) {
  const auto& tok = fixture_tokenizer();
  // A long line (60 words) in document 5: longer than a sequence, so it is cut.
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "corpus.txt", tok, 300, 11, 5, 60);
  config::RunConfig c;
  c.data.store = write("store", corpus.docs);
  c.data.train_files = {corpus.path};
  c.data.valid_files = {corpus.path};
  c.data.seq_len = 40;
  c.data.shuffle_buffer = 1;
  c.data.num_workers = 0;
  for (bool cross : {true, false}) {
    c.data.cross_documents = cross;
    std::vector<Ids> streamed;
    StreamingDataset stream(resolve_data_plan(c), tok, Split::valid);
    PackedSequence s;
    while (stream.next(s)) streamed.push_back(s.ids);
    const auto prepared = all_valid(c);
    ASSERT_GT(streamed.size(), 100u);
    ASSERT_EQ(prepared.size(), streamed.size()) << "cross_documents " << cross;
    for (size_t i = 0; i < streamed.size(); ++i) ASSERT_EQ(prepared[i], streamed[i]) << "sequence " << i;
  }
}

/// Token packing written out plainly, token by token: documents joined by [SEP]
/// (cross_documents) and cut when full, never a [SEP] as a sequence's last body token.
std::vector<Ids> reference_token_packing(const std::vector<mlm::testing::StoreDocument>& docs, int64_t seq_len,
                                         bool cross, const text::SpecialIds& ids) {
  const size_t capacity = static_cast<size_t>(seq_len - 2);
  std::vector<Ids> out;
  Ids body;
  auto flush = [&] {
    if (body.empty()) return;
    Ids seq{ids.cls};
    seq.insert(seq.end(), body.begin(), body.end());
    seq.push_back(ids.sep);
    out.push_back(seq);
    body.clear();
  };
  for (const auto& doc : docs) {
    Ids tokens;
    for (const auto& sentence : doc) tokens.insert(tokens.end(), sentence.begin(), sentence.end());
    if (!body.empty()) {
      if (capacity - body.size() < 2) flush();
      else body.push_back(ids.sep);
    }
    for (int32_t t : tokens) {
      if (body.size() == capacity) flush();
      body.push_back(t);
    }
    if (!cross) flush();
  }
  flush();
  return out;
}

TEST_F(SequenceTableTest, TokenPackingMatchesTheReference) {
  const auto& tok = fixture_tokenizer();
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "corpus.txt", tok, 200, 12, 7, 80);
  config::RunConfig c;
  c.data.store = write("store", corpus.docs);
  c.data.packing = config::Packing::tokens;
  for (int64_t seq_len : {16, 37}) {
    for (bool cross : {true, false}) {
      c.data.seq_len = seq_len;
      c.data.cross_documents = cross;
      EXPECT_EQ(all_valid(c), reference_token_packing(corpus.docs, seq_len, cross, tok.vocab().ids))
          << "seq_len " << seq_len << " cross_documents " << cross;
    }
  }
}

TEST_F(SequenceTableTest, AShardEndEndsASequence) {
  const auto& tok = fixture_tokenizer();
  const auto corpus = mlm::testing::write_sentence_corpus(dir_, "corpus.txt", tok, 90, 13);
  config::RunConfig whole, first, second;
  whole.data.store = write("three", corpus.docs, 3);
  const std::vector<mlm::testing::StoreDocument> part1(corpus.docs.begin(), corpus.docs.begin() + 30);
  const std::vector<mlm::testing::StoreDocument> part2(corpus.docs.begin() + 30, corpus.docs.begin() + 60);
  const std::vector<mlm::testing::StoreDocument> part3(corpus.docs.begin() + 60, corpus.docs.end());
  std::vector<Ids> want;
  int n = 0;
  for (const auto* part : {&part1, &part2, &part3}) {
    config::RunConfig one;
    one.data.store = write("part" + std::to_string(n++), *part);
    const auto seqs = all_valid(one);
    want.insert(want.end(), seqs.begin(), seqs.end());
  }
  EXPECT_EQ(all_valid(whole), want);
}

TEST_F(SequenceTableTest, RefusesAnIndexOutOfOrder) {
  mlm::testing::StoreSplit train;
  train.shards.push_back({{{5, 6, 7}, {8, 9}}, {{10}}});
  mlm::testing::write_store(dir_ / "bad", fixture(), train);
  // Swap two sentence ends in the index: 3, 5, 6 -> 5, 3, 6 (the last still matches).
  const auto index = (dir_ / "bad" / "train" / "000000.index").string();
  std::fstream f(index, std::ios::in | std::ios::out | std::ios::binary);
  const uint32_t swapped[2] = {5, 3};
  f.seekp(32 + 4 * 3);
  f.write(reinterpret_cast<const char*>(swapped), 8);
  f.close();
  const PreparedStore store((dir_ / "bad").string(), Split::train);
  EXPECT_THROW(SequenceTable(store, TableSettings{}), mlm::DataError);
}

// A 1 GB-scale store: 250M tokens (uint16) in 10M sentences of 1..49 tokens, 1M documents,
// in 4 shards; only the index is real (the token files are sparse).
TEST(SequenceTableSlow, BuildsA250MTokenTableInUnder2Seconds) {
  const auto dir = mlm::testing::make_temp_dir("sequence_table_slow");
  std::vector<mlm::testing::ShardLengths> shards(4);
  SeededRandom rng(1);
  int64_t tokens = 0;
  for (auto& shard : shards) {
    for (int d = 0; d < 250000; ++d) {
      shard.emplace_back();
      for (int s = 0; s < 10; ++s) {
        const auto n = static_cast<uint32_t>(1 + rng.below(49));
        shard.back().push_back(n);
        tokens += n;
      }
    }
  }
  mlm::testing::StoreFixture f;
  mlm::testing::write_sparse_store(dir, f, shards);
  const PreparedStore store(dir.string(), Split::train);
  for (auto packing : {config::Packing::sentences, config::Packing::tokens}) {
    TableSettings settings;
    settings.packing = packing;
    const auto start = std::chrono::steady_clock::now();
    const SequenceTable table(store, settings);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[table] %s packing: %lld tokens, %lld sentences -> %lld sequences in %.3f s, %.1f MB\n",
                std::string(config::to_string(packing)).c_str(), static_cast<long long>(tokens),
                static_cast<long long>(store.sentences()), static_cast<long long>(table.size()), seconds,
                static_cast<double>(table.memory_bytes()) / 1e6);
    EXPECT_LT(seconds, 2.0);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace mlm::data::sequence_table_test

// The streaming path over the test corpus as its producers wrote it in each format
// (tests/fixtures/produce_corpora.py): the same sequences as train.txt gives, and a resume in
// the middle of a file of each format continues bit-exactly, on one rank or two, alone or in
// a mixture.
#include <gtest/gtest.h>

#include "data/sequence_checks.h"
#include "mlm/config/run_config.h"
#include "mlm/data/mixture/mixture_source.h"
#include "mlm/data/open_sequences.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "data/stream_config.h"
#include "text/tokenizer_fixture.h"

namespace mlm::data::corpus_formats_stream {
namespace {

using mlm::testing::take;
using mlm::testing::expect_same;

using config::resolve_data_plan;
using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using mlm::testing::produced_corpus_path;

const char* const kFormats[] = {"train.parquet", "train_large.parquet", "train_dict.parquet",
                                "train.arrow",   "train_saved",         "train.txt.zst",
                                "train.jsonl.zst", "train.csv",         "train.tsv"};

config::RunConfig formats_config(std::vector<std::string> train_files) {
  return mlm::testing::small_stream_config(std::move(train_files));
}

// One epoch: the next epoch's file order is shuffled, which a corpus of two files (the saved
// dataset's shards) shows and one file does not.
TEST(CorpusFormatsStream, EachFormatPacksTheSequencesOfTheTextFile) {
  StreamingDataset text(resolve_data_plan(formats_config({corpus_path("train.txt")})),
                        fixture_tokenizer(), Split::train);
  std::vector<PackedSequence> want;
  for (PackedSequence s; text.epoch() == 0 && text.next(s);) want.push_back(s);
  want.pop_back();  // the first of the next epoch
  ASSERT_GT(want.size(), 300u);
  for (const char* name : kFormats) {
    StreamingDataset ds(resolve_data_plan(formats_config({produced_corpus_path(name)})),
                        fixture_tokenizer(), Split::train);
    expect_same(take(ds, want.size()), want, name);
  }
}

// Stop after n sequences, inside the file (about 900 sequences an epoch on one rank), save the
// position through JSON, rebuild: the next sequences are the ones the uninterrupted run gives.
TEST(CorpusFormatsStream, ResumesInTheMiddleOfEveryFormat) {
  for (const char* name : kFormats) {
    const auto c = formats_config({produced_corpus_path(name)});
    for (int world : {1, 2}) {
      const int rank = world - 1;
      StreamingDataset full(resolve_data_plan(c, rank, world), fixture_tokenizer(), Split::train);
      const auto reference = take(full, 400);
      for (size_t n : {size_t{7}, size_t{333}}) {
        StreamingDataset first(resolve_data_plan(c, rank, world), fixture_tokenizer(), Split::train);
        take(first, n);
        const auto json = first.position().to_json().dump();
        StreamingDataset resumed(resolve_data_plan(c, rank, world), fixture_tokenizer(),
                                 Split::train, DataPosition::from_json(nlohmann::json::parse(json)));
        expect_same(take(resumed, 50),
                    std::vector<PackedSequence>(reference.begin() + n, reference.begin() + n + 50),
                    std::string(name) + ", world " + std::to_string(world) + ", after " +
                        std::to_string(n) + ": " + json);
      }
    }
  }
}

// Two ranks stop at a step boundary inside the file; three continue from their positions and
// deal the single stream's next sequences, as with text files.
TEST(CorpusFormatsStream, AStepBoundaryInsideAFileContinuesOnAnotherWorldSize) {
  for (const char* name : {"train.parquet", "train.jsonl.zst", "train.csv", "train_saved"}) {
    const auto c = formats_config({produced_corpus_path(name)});
    StreamingDataset single(resolve_data_plan(c), fixture_tokenizer(), Split::train);
    const auto whole = take(single, 420);
    std::vector<nlohmann::json> saved;
    for (int rank = 0; rank < 2; ++rank) {
      StreamingDataset ds(resolve_data_plan(c, rank, 2), fixture_tokenizer(), Split::train);
      take(ds, 150);
      saved.push_back(ds.resume_state());
    }
    std::vector<std::vector<PackedSequence>> ranks;
    for (int rank = 0; rank < 3; ++rank) {
      StreamingDataset ds(resolve_data_plan(c, rank, 3), fixture_tokenizer(), Split::train,
                          DataPosition::from_json(reshard_position(saved, rank, 3)));
      ranks.push_back(take(ds, 40));
    }
    std::vector<PackedSequence> dealt;
    for (size_t i = 0; i < 40; ++i) {
      for (const auto& r : ranks) dealt.push_back(r[i]);
    }
    expect_same(dealt, std::vector<PackedSequence>(whole.begin() + 300, whole.end()), name);
  }
}

TEST(CorpusFormatsStream, AMixtureOfFormatsResumesExactly) {
  auto c = formats_config({});
  c.data.train_files.clear();
  c.data.valid_fraction = 0.1;
  c.data.sources = {{{produced_corpus_path("train.parquet")}, 0.5, ""},
                    {{produced_corpus_path("train.jsonl.zst")}, 0.3, ""},
                    {{produced_corpus_path("train.csv"), produced_corpus_path("train_saved")}, 0.2, ""}};
  for (int world : {1, 3}) {
    const int rank = world - 1;
    MixtureSource reference(resolve_data_plan(c, rank, world), fixture_tokenizer(), Split::train);
    const auto ref = take(reference, 330);
    for (size_t stop : {size_t{1}, size_t{34}, size_t{140}, size_t{300}}) {
      MixtureSource first(resolve_data_plan(c, rank, world), fixture_tokenizer(), Split::train);
      take(first, stop);
      const auto state = nlohmann::json::parse(first.resume_state().dump());
      MixtureSource resumed(resolve_data_plan(c, rank, world), fixture_tokenizer(), Split::train,
                            &state);
      expect_same(take(resumed, 25), std::vector<PackedSequence>(ref.begin() + stop, ref.begin() + stop + 25),
                  "world " + std::to_string(world) + ", after " + std::to_string(stop));
    }
  }
}

}  // namespace
}  // namespace mlm::data::corpus_formats_stream

// The test corpus as Parquet, Arrow IPC, datasets' save_to_disk, zstd and CSV/TSV, each
// written by its real producer at build time (tests/fixtures/produce_corpora.py): every file
// yields train.txt's documents in order, restarts at any position it reported, and damaged
// files fail with one message naming the file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "mlm/text/corpus/document_reader.h"
#include "mlm/util/errors.h"
#include "text/reader_restarts.h"
#include "text/tokenizer_fixture.h"

namespace mlm::text {
namespace {

using mlm::testing::corpus_path;
using mlm::testing::produced_corpus_path;

std::vector<std::string> expected_texts() {
  std::ifstream in(produced_corpus_path("documents.json"));
  return nlohmann::json::parse(in).get<std::vector<std::string>>();
}

std::vector<Document> read_file(const CorpusFile& file, const ReadOptions& options = {}) {
  DocumentReader reader(file, options);
  std::vector<Document> docs;
  Document doc;
  while (reader.next(doc)) docs.push_back(doc);
  return docs;
}

// Every document of every file the pattern names, in order.
std::vector<Document> read_corpus(const std::string& pattern, const ReadOptions& options = {}) {
  std::vector<Document> docs;
  for (const auto& file : resolve_corpus({pattern}, options, "data.train_files")) {
    for (auto& d : read_file(file, options)) docs.push_back(std::move(d));
  }
  return docs;
}

std::vector<std::string> texts(const std::vector<Document>& docs) {
  std::vector<std::string> out;
  for (const auto& d : docs) out.push_back(d.text);
  return out;
}

class ProducedCorpus : public ::testing::TestWithParam<const char*> {};

TEST_P(ProducedCorpus, YieldsTheTextFilesDocumentsInOrder) {
  const auto want = expected_texts();
  ASSERT_EQ(texts(read_corpus(corpus_path("train.txt"))), want) << "the producer's split";
  EXPECT_EQ(texts(read_corpus(produced_corpus_path(GetParam()))), want);
}

TEST_P(ProducedCorpus, RestartsAtAnyPositionItReported) {
  for (const auto& file : resolve_corpus({produced_corpus_path(GetParam())}, {}, "k")) {
    const auto all = read_file(file);
    ASSERT_GT(all.size(), 100u);
    for (size_t k : {size_t{1}, size_t{36}, size_t{37}, size_t{38}, size_t{101}, all.size() - 1}) {
      mlm::testing::expect_restart_at(file, all, k);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ProducedCorpus,
                         ::testing::Values("train.parquet", "train_large.parquet",
                                           "train_dict.parquet", "train.arrow", "train_saved",
                                           "train.txt.zst", "train.jsonl.zst", "train.csv",
                                           "train.tsv"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(ProducedCorpusTables, ARowIsThePositionAndNullOrEmptyCellsAreSkipped) {
  const auto files = resolve_corpus({produced_corpus_path("train.parquet")}, {}, "k");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].format, FileFormat::parquet);
  const auto docs = read_file(files[0]);
  // Row 7 is null and row 24 empty (produce_corpora.py's with_gaps): document 7 is row 8.
  EXPECT_EQ(docs[6].offset, 6);
  EXPECT_EQ(docs[7].offset, 8);
  EXPECT_EQ(docs[7].line, 9);
  EXPECT_EQ(docs[23].offset, 25);
  EXPECT_EQ(docs[6].end_offset, 7);
  EXPECT_EQ(describe_place(files[0], docs[7].line), files[0].path + ": row 9");
}

TEST(ProducedCorpusTables, SavedDatasetDirectoryStandsForItsShards) {
  const auto files = resolve_corpus({produced_corpus_path("train_saved")}, {}, "k");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_NE(files[0].path.find("data-00000-of-00002.arrow"), std::string::npos);
  EXPECT_EQ(files[1].format, FileFormat::arrow);
}

TEST(ProducedCorpusTables, ANamedColumnOtherThanText) {
  ReadOptions options;
  options.text_field = "note";
  const auto docs = read_corpus(produced_corpus_path("train.csv"), options);
  ASSERT_EQ(docs.size(), 400u + 16u);  // every row has a note, the gap rows too
  EXPECT_EQ(docs[0].text, "row 0, \"quoted\"\nnext line");
}

TEST(ProducedCorpusTables, ACsvRowLongerThanArrowsParseBlock) {
  const auto dir = mlm::testing::make_temp_dir("long_csv_row");
  std::string long_text;
  while (long_text.size() < (size_t{5} << 20)) long_text += "a long cell, \"quoted\" words\n";
  std::string quoted;
  for (char c : long_text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  const auto path = (dir / "long.csv").string();
  std::ofstream(path) << "id,text\n1,short\n2,\"" << quoted << "\"\n3,\"after\nit\"\n";
  const auto files = resolve_corpus({path}, {}, "k");
  const auto docs = read_file(files[0]);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].text, "short");
  EXPECT_EQ(docs[1].text, long_text);
  EXPECT_EQ(docs[2].text, "after\nit");
  EXPECT_EQ(docs[2].offset, 2);
  DocumentReader from_last(files[0], {}, docs[2].offset, docs[2].line);
  Document d;
  ASSERT_TRUE(from_last.next(d));
  EXPECT_EQ(d.text, "after\nit");
  std::filesystem::remove_all(dir);
}

// One message naming the file (and what is wrong), at resolve time or on the first read.
std::string first_error(const std::string& path, const ReadOptions& options = {}) {
  try {
    for (const auto& file : resolve_corpus({path}, options, "data.train_files")) read_file(file, options);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

void expect_named(const std::string& message, const std::string& path,
                  const std::vector<std::string>& needles) {
  EXPECT_NE(message.find(path), std::string::npos) << message;
  for (const auto& needle : needles) EXPECT_NE(message.find(needle), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(BadCorpusFiles, ParquetWithoutTheColumnNamesTheColumnsThere) {
  const auto path = produced_corpus_path("bad/no_text_column.parquet");
  expect_named(first_error(path), path, {"\"text\"", "data.text_field", "id", "content"});
}

TEST(BadCorpusFiles, ParquetColumnThatHoldsNoStrings) {
  const auto path = produced_corpus_path("bad/int_text.parquet");
  expect_named(first_error(path), path, {"\"text\"", "int64"});
}

TEST(BadCorpusFiles, TruncatedParquetFooter) {
  const auto path = produced_corpus_path("bad/truncated.parquet");
  expect_named(first_error(path), path, {"footer"});
}

TEST(BadCorpusFiles, ZstdStreamCutInsideAFrame) {
  const auto path = produced_corpus_path("bad/cut.jsonl.zst");
  expect_named(first_error(path), path, {"cut off inside a frame"});
}

TEST(BadCorpusFiles, CsvWithAnUnclosedQuote) {
  const auto path = produced_corpus_path("bad/unclosed.csv");
  expect_named(first_error(path), path, {":3: a quoted field opens on this line and never closes"});
}

TEST(BadCorpusFiles, ContentTheNameDoesNotSay) {
  for (const char* name : {"bad/parquet_named.jsonl", "bad/jsonl_named.parquet", "bad/text_named.txt.zst"}) {
    const auto path = produced_corpus_path(name);
    expect_named(first_error(path), path, {"data.train_files", "is not"});
  }
}

}  // namespace
}  // namespace mlm::text

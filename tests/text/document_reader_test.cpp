#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "mlm/text/corpus/document_reader.h"
#include "mlm/text/utf8.h"
#include "mlm/util/errors.h"
#include "text/reader_restarts.h"
#include "text/tokenizer_fixture.h"

namespace mlm::text {
namespace {

using mlm::testing::corpus_path;

std::vector<Document> read_all(const std::string& path, ReadOptions options = {},
                               ReaderCounters* counters = nullptr) {
  DocumentReader reader({path, detect_format(path, options.format)}, options);
  std::vector<Document> docs;
  Document doc;
  while (reader.next(doc)) docs.push_back(doc);
  if (counters) *counters = reader.counters();
  return docs;
}

class TempDir {
 public:
  TempDir() : dir_(mlm::testing::make_temp_dir("reader")) {}
  ~TempDir() { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) const {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

TEST(DocumentReader, BlankLineBlocks) {
  const auto docs = read_all(corpus_path("train.txt"));
  EXPECT_EQ(docs.size(), 400u);
  for (const auto& d : docs) {
    EXPECT_FALSE(d.text.empty());
    EXPECT_EQ(d.text.find("\n\n"), std::string::npos);
  }
  TempDir tmp;
  const auto path = tmp.write("b.txt", "\n\n  \nfirst a\r\nfirst b\n\n\n\nsecond\n \t \nthird");
  const auto small = read_all(path);
  ASSERT_EQ(small.size(), 3u);
  EXPECT_EQ(small[0].text, "first a\nfirst b");
  EXPECT_EQ(small[0].line, 4);
  EXPECT_EQ(small[1].text, "second");
  EXPECT_EQ(small[1].line, 9);
  EXPECT_EQ(small[2].text, "third");
}

TEST(DocumentReader, OneDocumentPerLine) {
  ReadOptions options;
  options.doc_separator = config::DocSeparator::line;
  EXPECT_EQ(read_all(corpus_path("lines.txt"), options).size(), 60u);
  TempDir tmp;
  const auto docs = read_all(tmp.write("l.txt", "a b\n\n  \nc d\r\ne"), options);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[1].text, "c d");
  EXPECT_EQ(docs[1].line, 4);
  EXPECT_EQ(docs[2].text, "e");
}

TEST(DocumentReader, JsonLinesAndGzip) {
  const auto jsonl = read_all(corpus_path("docs.jsonl"));
  EXPECT_EQ(jsonl.size(), 50u);
  EXPECT_EQ(read_all(corpus_path("docs.jsonl.gz")).size(), 30u);
  EXPECT_EQ(read_all(corpus_path("blocks.txt.gz")).size(), 30u);
  ReadOptions options;
  options.text_field = "body";
  TempDir tmp;
  const auto docs = read_all(tmp.write("f.jsonl", "{\"body\": \"x y\"}\n\n{\"body\": \"\\u00e9t\\u00e9\"}\n"), options);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].text, "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(docs[1].line, 3);
}

TEST(DocumentReader, RestartsAtAnyReportedOffset) {
  for (const char* name : {"train.txt", "docs.jsonl", "blocks.txt.gz"}) {
    const auto all = read_all(corpus_path(name));
    ASSERT_GT(all.size(), 20u);
    const CorpusFile file{corpus_path(name), detect_format(name, config::DataFormat::auto_detect)};
    for (size_t k : {size_t{1}, size_t{7}, all.size() - 1}) mlm::testing::expect_restart_at(file, all, k);
  }
}

TEST(DocumentReader, HugeLineIsCutIntoBoundedDocuments) {
  TempDir tmp;
  std::string line;
  while (line.size() < 3 * kMaxTextDocumentBytes + 1000) line += "lorem ipsum dolor sit amet ";
  const auto path = tmp.write("huge.txt", "short doc\n\n" + line + "\n\nlast line\n");
  for (auto sep : {config::DocSeparator::blank_line, config::DocSeparator::line}) {
    ReadOptions options;
    options.doc_separator = sep;
    const auto docs = read_all(path, options);
    ASSERT_GE(docs.size(), 5u);
    EXPECT_EQ(docs.front().text, "short doc");
    EXPECT_EQ(docs.back().text, "last line");
    std::string joined;
    for (size_t i = 1; i + 1 < docs.size(); ++i) {
      EXPECT_LE(docs[i].text.size(), kMaxTextDocumentBytes);
      joined += docs[i].text;
      // Restarting at a piece's offset gives the same pieces.
      DocumentReader again({path, FileFormat::text}, options, docs[i].offset, docs[i].line);
      Document d;
      ASSERT_TRUE(again.next(d));
      EXPECT_TRUE(d.text == docs[i].text) << "piece " << i;
    }
    EXPECT_TRUE(joined == line) << "the pieces do not add up to the line";
  }
}

TEST(DocumentReader, InvalidUtf8IsRepairedAndCounted) {
  TempDir tmp;
  const auto path = tmp.write("u.txt", "good text\n\nbad \xFF\xFE bytes and \xE2\x82 cut\n\n"
                                       "{\"text\": \"x\"}\n");
  ReaderCounters counters;
  const auto docs = read_all(path, {}, &counters);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[1].text, "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes and \xEF\xBF\xBD cut");
  EXPECT_EQ(counters.invalid_utf8_fixes, 3);
  const auto jsonl = tmp.write("u.jsonl", "{\"text\": \"caf\xE9\"}\n");
  const auto j = read_all(jsonl, {}, &counters);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].text, "caf\xEF\xBF\xBD");
  EXPECT_EQ(counters.invalid_utf8_fixes, 1);
}

TEST(DocumentReader, BadJsonRecordsSkippedOrFatal) {
  TempDir tmp;
  const auto path = tmp.write("bad.jsonl",
                              "{\"text\": \"one\"}\nnot json\n{\"other\": 1}\n[1,2]\n{\"text\": 5}\n"
                              "{\"text\": \"two\"}\n");
  ReaderCounters counters;
  const auto docs = read_all(path, {}, &counters);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].text, "two");
  EXPECT_EQ(counters.bad_records, 4);
  ReadOptions strict;
  strict.on_bad_record = config::BadRecordPolicy::error;
  try {
    read_all(path, strict);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2:"), std::string::npos) << e.what();
  }
}

TEST(DocumentReader, NulByteInDocumentIsABadRecord) {
  TempDir tmp;
  std::string content(70 * 1024, 'a');  // past the 64 KiB binary sniffing window
  content += "\n\nbinary";
  content += '\0';
  content += "tail\n\nafter\n";
  const auto path = tmp.write("nul.txt", content);
  ReaderCounters counters;
  const auto docs = read_all(path, {}, &counters);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].text, "after");
  EXPECT_EQ(counters.bad_records, 1);
  ReadOptions strict;
  strict.on_bad_record = config::BadRecordPolicy::error;
  EXPECT_THROW(read_all(path, strict), DataError);
}

TEST(CorpusFiles, BadPathsAreNamed) {
  TempDir tmp;
  const auto good = tmp.write("good.txt", "hello world\n");
  auto expect_error = [](const std::vector<std::string>& patterns, const std::string& needle,
                         ReadOptions options = {}) {
    try {
      resolve_corpus(patterns, options, "data.train_files");
      FAIL() << "expected DataError for " << needle;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("data.train_files"), std::string::npos) << e.what();
    }
  };
  expect_error({good, tmp.path("missing.txt")}, "missing.txt");
  expect_error({tmp.path("*.nothing")}, "*.nothing");
  expect_error({tmp.path("")}, "is a directory");
  expect_error({good + "/inside.txt"}, "inside.txt");
  EXPECT_THROW(resolve_corpus({}, {}, "data.train_files"), ConfigError);

  const auto binary = tmp.write("bin.txt", std::string("abc\0def", 7));
  const auto files = resolve_corpus({tmp.path("*.txt")}, {}, "data.train_files");
  ASSERT_EQ(files.size(), 1u);  // the binary file is skipped with a warning
  EXPECT_EQ(files[0].path, good);
  ReadOptions strict;
  strict.on_bad_record = config::BadRecordPolicy::error;
  expect_error({good, binary}, "bin.txt", strict);
  expect_error({binary}, "no readable text file");
  EXPECT_EQ(resolve_corpus({corpus_path("docs.jsonl.gz")}, {}, "k")[0].format, FileFormat::jsonl);
}

TEST(Utf8, CutPointPrefersWhitespaceAndCharacterBoundaries) {
  EXPECT_EQ(cut_point("abc def", 5), 3u);
  EXPECT_EQ(cut_point("abc", 5), 3u);
  const std::string accents = "\xC3\xA9\xC3\xA9\xC3\xA9";  // no whitespace
  EXPECT_EQ(cut_point(accents, 3), 2u);
  std::string s = "abc";
  EXPECT_EQ(repair_utf8(s), 0u);
  s = "\xED\xA0\x80";  // a UTF-16 surrogate encoded in UTF-8 is invalid
  EXPECT_EQ(repair_utf8(s), 1u);
}

}  // namespace
}  // namespace mlm::text

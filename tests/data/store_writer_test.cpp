// prepare_store (mlm/data/store/store_writer.h): the store holds exactly the documents, sentences
// and tokens the streaming path reads (train and held-out valid alike), does not depend on
// the thread count, resumes after a stop (or a truncated shard, or a full disk) to the same
// bytes, and refuses another tokenizer or changed sources.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "mlm/config/run_config.h"
#include "mlm/data/store/prepared_store.h"
#include "mlm/data/store/store_writer.h"
#include "mlm/data/stream/tokenizing_pipeline.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

// A named namespace: the unity build compiles this file with the other data tests.
namespace mlm::data::store_writer_test {

namespace fs = std::filesystem;
using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using Sentences = std::vector<std::vector<int32_t>>;  // one document: its sentences' ids

// Small shards, so that the fixture corpus spans several of them.
constexpr int64_t kShardTokens = 2500;

std::vector<Sentences> read_store(const std::string& dir, Split split) {
  PreparedStore store(dir, split);
  std::vector<Sentences> docs;
  for (size_t i = 0; i < store.shard_count(); ++i) {
    const auto& shard = store.shard(i);
    for (int64_t d = 0; d < shard.documents(); ++d) {
      Sentences doc;
      for (int64_t s = shard.doc_first_sentence(d); s < shard.doc_first_sentence(d + 1); ++s) {
        const int64_t begin = s == 0 ? 0 : shard.sentence_end(s - 1);
        std::vector<int32_t> ids;
        shard.read_tokens(begin, shard.sentence_end(s), ids);
        doc.push_back(std::move(ids));
      }
      docs.push_back(std::move(doc));
    }
  }
  return docs;
}

/// The streaming path's documents for `split` (StreamingDataset's selection, TokenizingPipeline
/// with sentences kept), in file order, documents without tokens left out as the packer does.
std::vector<Sentences> read_streaming(const config::RunConfig& config, Split split) {
  const auto& data = config.data;
  StreamOptions stream;
  stream.read = text::ReadOptions::from(data);
  stream.held_out_fraction = data.valid_fraction;
  const bool holds_out = data.valid_files.empty() && data.valid_fraction > 0;
  if (split == Split::train) {
    stream.files = text::resolve_corpus(data.train_files, stream.read, "data.train_files");
    stream.holdout = holds_out ? Holdout::without_held_out : Holdout::all;
  } else if (!data.valid_files.empty()) {
    stream.files = text::resolve_corpus(data.valid_files, stream.read, "data.valid_files");
  } else {
    stream.files = text::resolve_corpus(data.train_files, stream.read, "data.train_files");
    stream.holdout = Holdout::held_out_only;
  }
  TokenizingPipeline pipeline(DocumentStream(stream, 0, StreamCursor{}), fixture_tokenizer(), 2,
                              /*keep_sentences=*/true);
  std::vector<Sentences> docs;
  TokenizedDocument doc;
  while (pipeline.next(doc) == StreamEvent::document) {
    if (doc.ids.empty()) continue;
    Sentences sentences;
    int64_t begin = 0;
    for (const int64_t end : doc.sentence_ends) {
      sentences.emplace_back(doc.ids.begin() + begin, doc.ids.begin() + end);
      begin = end;
    }
    docs.push_back(std::move(sentences));
  }
  return docs;
}

/// Every file under `dir`, relative path -> bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files[fs::relative(entry.path(), dir).string()] =
        std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return files;
}

std::vector<std::string> names(const std::map<std::string, std::string>& files) {
  std::vector<std::string> out;
  for (const auto& [name, bytes] : files) out.push_back(name);
  return out;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class StoreWriter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = mlm::testing::make_temp_dir("store_writer");
    // Copies, so that a test may change a source file.
    fs::copy_file(corpus_path("train.txt"), dir_ / "train.txt");
    fs::copy_file(corpus_path("docs.jsonl"), dir_ / "docs.jsonl");
    fs::copy_file(corpus_path("blocks.txt.gz"), dir_ / "blocks.txt.gz");
    fs::copy_file(corpus_path("valid.txt"), dir_ / "valid.txt");
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Three formats (text, JSON Lines, gzip), the valid split held out of them.
  config::RunConfig held_out_config(const std::string& store = "store") const {
    config::RunConfig c;
    c.data.train_files = {(dir_ / "train.txt").string(), (dir_ / "docs.jsonl").string(),
                          (dir_ / "blocks.txt.gz").string()};
    c.data.valid_fraction = 0.2;
    c.data.store = (dir_ / store).string();
    return c;
  }

  static PrepareOptions options(int threads = 2) {
    PrepareOptions o;
    o.threads = threads;
    o.shard_tokens = kShardTokens;
    return o;
  }

  fs::path dir_;
};

TEST_F(StoreWriter, HoldsExactlyTheStreamingPathsDocumentsSentencesAndTokens) {
  const auto config = held_out_config();
  const auto summary = prepare_store(config.data, fixture_tokenizer(), options());
  ASSERT_TRUE(summary.complete);
  EXPECT_FALSE(summary.already_prepared);

  for (const Split split : {Split::train, Split::valid}) {
    const auto want = read_streaming(config, split);
    const auto got = read_store(config.data.store, split);
    ASSERT_GT(want.size(), 5u);
    ASSERT_EQ(got.size(), want.size()) << (split == Split::train ? "train" : "valid");
    for (size_t d = 0; d < want.size(); ++d) {
      ASSERT_EQ(got[d], want[d]) << "document " << d << " of " << (split == Split::train ? "train" : "valid");
    }
  }

  // The counts and the manifest's bookkeeping.
  PreparedStore train(config.data.store, Split::train), valid(config.data.store, Split::valid);
  EXPECT_GT(train.shard_count(), 3u) << "the fixture should span several shards";
  for (size_t i = 0; i < train.shard_count(); ++i) {
    // Whole documents, closed before a document that would take a shard past the limit.
    if (i + 1 < train.shard_count()) {
      EXPECT_LE(train.shard(i).tokens(), kShardTokens);
      EXPECT_GT(train.shard(i).tokens() + train.shard(i + 1).doc_end(0), kShardTokens);
    }
  }
  EXPECT_EQ(summary.documents, train.documents() + valid.documents());
  EXPECT_EQ(summary.sentences, train.sentences() + valid.sentences());
  EXPECT_EQ(summary.tokens, train.tokens() + valid.tokens());
  EXPECT_EQ(summary.tokens_written, summary.tokens);
  const auto& m = train.manifest();
  EXPECT_EQ(m["token_bytes"], 2);
  EXPECT_EQ(m["sentences"], "line");
  EXPECT_EQ(m["tokenizer"]["fingerprint"], tokenizer_fingerprint(fixture_tokenizer()));
  EXPECT_EQ(m["tokenizer"]["type"], "unigram");
  EXPECT_EQ(m["tokenizer"]["vocab_size"], fixture_tokenizer().size());
  EXPECT_EQ(m["sources"]["train"].size(), 3u);
  EXPECT_EQ(m["sources"]["valid"], m["sources"]["train"]);
  EXPECT_EQ(m["sources"]["train"][2]["bytes"], fs::file_size(dir_ / "blocks.txt.gz"));
  EXPECT_EQ(m["splits"]["train"]["tokens"], train.tokens());
  EXPECT_EQ(m["splits"]["valid"]["documents"], valid.documents());
  EXPECT_EQ(m["splits"]["train"]["shards"][0]["name"], "train/000000");
  EXPECT_FALSE(fs::exists(fs::path(config.data.store) / "prepare.progress.json"));
}

TEST_F(StoreWriter, ValidFilesAreTheValidSplitAndTrainKeepsEveryDocument) {
  auto config = held_out_config();
  config.data.valid_files = {(dir_ / "valid.txt").string()};
  prepare_store(config.data, fixture_tokenizer(), options());
  EXPECT_EQ(read_store(config.data.store, Split::train), read_streaming(config, Split::train));
  EXPECT_EQ(read_store(config.data.store, Split::valid), read_streaming(config, Split::valid));
  // Nothing held out: the train split has every document of the three files.
  auto all = config;
  all.data.valid_fraction = 0;
  EXPECT_EQ(read_store(config.data.store, Split::train), read_streaming(all, Split::train));

  // Without valid data the store has no valid split, and says why when asked for one.
  config.data.valid_files.clear();
  config.data.valid_fraction = 0;
  config.data.store = (dir_ / "no_valid").string();
  prepare_store(config.data, fixture_tokenizer(), options());
  EXPECT_THROW(PreparedStore(config.data.store, Split::valid), DataError);
}

TEST_F(StoreWriter, SameBytesWhateverTheThreadCount) {
  const auto one = held_out_config("one"), three = held_out_config("three");
  prepare_store(one.data, fixture_tokenizer(), options(1));
  prepare_store(three.data, fixture_tokenizer(), options(3));
  const auto a = snapshot(one.data.store), b = snapshot(three.data.store);
  ASSERT_EQ(names(a), names(b));
  for (const auto& [name, bytes] : a) EXPECT_TRUE(bytes == b.at(name)) << name << " differs";
}

TEST_F(StoreWriter, ResumesAfterAStopToTheSameBytes) {
  const auto whole = held_out_config("whole"), stopped = held_out_config("stopped");
  prepare_store(whole.data, fixture_tokenizer(), options());

  auto stop = options(3);
  stop.stop_after_shards = 2;
  const auto first = prepare_store(stopped.data, fixture_tokenizer(), stop);
  EXPECT_FALSE(first.complete);
  EXPECT_EQ(first.shards, 2);
  const fs::path dir = stopped.data.store;
  EXPECT_FALSE(is_prepared_store(dir.string()));
  const auto progress = read_json(dir / "prepare.progress.json");
  ASSERT_EQ(progress["splits"]["train"]["shards"].size(), 2u);
  EXPECT_EQ(progress["splits"]["train"]["complete"], false);
  EXPECT_THROW(PreparedStore(dir.string(), Split::train), DataError);

  // Two more shards, then the rest: each run continues where the last one stopped.
  const auto second = prepare_store(stopped.data, fixture_tokenizer(), stop);
  EXPECT_EQ(second.shards, 4);
  const auto last = prepare_store(stopped.data, fixture_tokenizer(), options(1));
  EXPECT_TRUE(last.complete);
  EXPECT_LT(last.tokens_written, last.tokens) << "a resumed prepare re-did finished shards";
  EXPECT_EQ(snapshot(dir), snapshot(whole.data.store));
}

TEST_F(StoreWriter, ATruncatedShardIsPreparedAgainOnResume) {
  const auto whole = held_out_config("whole"), cut = held_out_config("cut");
  prepare_store(whole.data, fixture_tokenizer(), options());
  auto stop = options();
  stop.stop_after_shards = 3;
  prepare_store(cut.data, fixture_tokenizer(), stop);
  const fs::path shard = fs::path(cut.data.store) / "train" / "000001.tokens";
  fs::resize_file(shard, fs::file_size(shard) / 2);
  // A shard renamed into place by a run killed before it could list it: written again.
  std::ofstream(fs::path(cut.data.store) / "train" / "000003.tokens") << "stale";

  prepare_store(cut.data, fixture_tokenizer(), options());
  EXPECT_EQ(snapshot(cut.data.store), snapshot(whole.data.store));
}

TEST_F(StoreWriter, AlreadyPreparedStoreIsLeftAsItIs) {
  const auto config = held_out_config();
  const auto first = prepare_store(config.data, fixture_tokenizer(), options());
  const auto manifest = fs::path(config.data.store) / "manifest.json";
  const auto written = fs::last_write_time(manifest);
  const auto before = snapshot(config.data.store);
  const auto again = prepare_store(config.data, fixture_tokenizer(), options());
  EXPECT_TRUE(again.already_prepared);
  EXPECT_EQ(again.tokens, first.tokens);
  EXPECT_EQ(again.documents, first.documents);
  EXPECT_EQ(again.tokens_written, 0);
  EXPECT_EQ(fs::last_write_time(manifest), written);
  EXPECT_EQ(snapshot(config.data.store), before);
}

/// A second tokenizer: the fixture's settings with another vocabulary size.
const text::Tokenizer& other_tokenizer() {
  static const text::Tokenizer tokenizer = [] {
    const auto dir = mlm::testing::make_temp_dir("other_tok");
    auto c = mlm::testing::small_tokenizer_config((dir / "other.model").string());
    c.vocab_size = 150;
    text::Tokenizer::train(c, {corpus_path("train.txt")});
    auto t = text::Tokenizer::load(c.model);
    fs::remove_all(dir);
    return t;
  }();
  return tokenizer;
}

TEST_F(StoreWriter, RefusesAnotherTokenizerUntilOverwrite) {
  ASSERT_NE(tokenizer_fingerprint(other_tokenizer()), tokenizer_fingerprint(fixture_tokenizer()));
  const auto config = held_out_config();
  const fs::path dir = config.data.store;

  // An interrupted prepare is resumed only with its own tokenizer.
  auto stop = options();
  stop.stop_after_shards = 1;
  prepare_store(config.data, fixture_tokenizer(), stop);
  try {
    prepare_store(config.data, other_tokenizer(), options());
    FAIL() << "resumed with another tokenizer";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "tokenizer.model");
    EXPECT_NE(std::string(e.what()).find("--overwrite"), std::string::npos) << e.what();
  }

  // A complete store of another tokenizer is refused, naming data.store and --overwrite.
  prepare_store(config.data, fixture_tokenizer(), options());
  try {
    prepare_store(config.data, other_tokenizer(), options());
    FAIL() << "a complete store of another tokenizer was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "data.store");
    const std::string what = e.what();
    EXPECT_NE(what.find("another tokenizer"), std::string::npos) << what;
    EXPECT_NE(what.find("--overwrite"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }

  // --overwrite prepares it again and deletes the store's own files only.
  std::ofstream(dir / "notes.txt") << "mine";
  auto overwrite = options();
  overwrite.overwrite = true;
  const auto redone = prepare_store(config.data, other_tokenizer(), overwrite);
  EXPECT_TRUE(redone.complete);
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  PreparedStore store(dir.string(), Split::train);
  EXPECT_NO_THROW(store.require_tokenizer(other_tokenizer()));
  EXPECT_THROW(store.require_tokenizer(fixture_tokenizer()), ConfigError);
}

TEST_F(StoreWriter, RefusesToResumeOverAChangedSourceFile) {
  const auto config = held_out_config();
  auto stop = options();
  stop.stop_after_shards = 1;
  prepare_store(config.data, fixture_tokenizer(), stop);
  std::ofstream(dir_ / "docs.jsonl", std::ios::app) << "{\"text\": \"one more document.\"}\n";
  try {
    prepare_store(config.data, fixture_tokenizer(), options());
    FAIL() << "resumed over a changed file";
  } catch (const DataError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir_ / "docs.jsonl").string()), std::string::npos) << what;
    EXPECT_NE(what.find("--overwrite"), std::string::npos) << what;
  }
  // A complete store read with another held-out share would have other splits: refused.
  auto overwrite = options();
  overwrite.overwrite = true;
  prepare_store(config.data, fixture_tokenizer(), overwrite);
  auto other = config;
  other.data.valid_fraction = 0.3;
  try {
    prepare_store(other.data, fixture_tokenizer(), options());
    FAIL() << "a store of another held-out share was taken as prepared";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "data.store");
    EXPECT_NE(std::string(e.what()).find("data.valid_fraction"), std::string::npos) << e.what();
  }
}

TEST_F(StoreWriter, CorpusWithoutTokensOrHeldOutDocumentsIsADataError) {
  std::ofstream(dir_ / "blank.txt") << "\n   \n\t\n";
  auto config = held_out_config();
  config.data.train_files = {(dir_ / "blank.txt").string()};
  config.data.valid_fraction = 0;
  try {
    prepare_store(config.data, fixture_tokenizer(), options());
    FAIL() << "no error for a corpus without tokens";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data.train_files"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("blank.txt"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(is_prepared_store(config.data.store));

  config = held_out_config("tiny_share");
  config.data.valid_fraction = 1e-9;
  try {
    prepare_store(config.data, fixture_tokenizer(), options());
    FAIL() << "no error for an empty held-out split";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("data.valid_fraction"), std::string::npos) << e.what();
  }

  config.data.store.clear();
  EXPECT_THROW(prepare_store(config.data, fixture_tokenizer(), options()), UsageError);
}

TEST_F(StoreWriter, MissingOrBinaryInputIsADataErrorNamingTheFile) {
  auto config = held_out_config();
  config.data.train_files = {(dir_ / "missing.txt").string()};
  try {
    prepare_store(config.data, fixture_tokenizer(), options());
    FAIL() << "no error for a missing file";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.txt"), std::string::npos) << e.what();
  }
  std::ofstream(dir_ / "binary.txt", std::ios::binary) << std::string("ab\0cd\n", 6);
  config.data.train_files = {(dir_ / "binary.txt").string()};
  config.data.on_bad_record = config::BadRecordPolicy::error;
  try {
    prepare_store(config.data, fixture_tokenizer(), options());
    FAIL() << "no error for a binary file";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("binary.txt"), std::string::npos) << e.what();
  }
}

/// Every file written past `bytes` fails as on a full disk (EFBIG with SIGXFSZ ignored, the
/// fault suite's DiskFull mechanism), for this process, until destroyed.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_;
};

TEST_F(StoreWriter, AFullDiskKeepsWhatWasWrittenAndResumes) {
  const auto whole = held_out_config("whole"), full = held_out_config("full");
  prepare_store(whole.data, fixture_tokenizer(), options());
  auto stop = options();
  stop.stop_after_shards = 2;
  prepare_store(full.data, fixture_tokenizer(), stop);
  const fs::path dir = full.data.store;
  const auto progress_before = snapshot(dir).at("prepare.progress.json");

  // The progress file still fits, the next shard's token file does not.
  const auto limit_bytes = static_cast<int64_t>(progress_before.size()) + 1024;
  ASSERT_GT(static_cast<int64_t>(snapshot(whole.data.store).at("train/000002.tokens").size()), limit_bytes);
  {
    FileSizeLimit limit(static_cast<rlim_t>(limit_bytes));
    try {
      prepare_store(full.data, fixture_tokenizer(), options());
      FAIL() << "no error from a full disk";
    } catch (const DataError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("train/000002.tokens"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  const auto after = snapshot(dir);
  for (const auto& [name, bytes] : after) {
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "temporary file left: " << name;
  }
  EXPECT_EQ(after.at("prepare.progress.json"), progress_before);
  EXPECT_EQ(after.at("train/000001.tokens"), snapshot(whole.data.store).at("train/000001.tokens"));

  // Space again: the rerun resumes and ends with the store that never failed.
  prepare_store(full.data, fixture_tokenizer(), options());
  EXPECT_EQ(snapshot(dir), snapshot(whole.data.store));
}

}  // namespace mlm::data::store_writer_test

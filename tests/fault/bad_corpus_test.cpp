// Bad corpora through the real mlm-train (issue 3, "Bad input"): missing, empty, binary,
// unreadable, invalid UTF-8, JSON Lines garbage, a 100 MB single line, a file that shrinks
// while it is read. Never a crash; an error names the file; memory stays bounded.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>

#include "fault_util.h"
#include "mlm/util/errors.h"
#include "tiny_run.h"

namespace mlm::fault {
namespace {

std::string fixture_text() { return read_text(fs::path(MLM_FIXTURES_DIR) / "corpus/train.txt"); }

// A two-step run of the tiny config on `train_files` (YAML list text).
TinyRun corpus_run(const fs::path& root, const std::string& train_files,
                   std::vector<std::string> extra = {}) {
  std::vector<std::string> settings = {"data.train_files=" + train_files, "train.max_steps=2",
                                       "eval.max_batches=1", "checkpoint.every_steps=0"};
  settings.insert(settings.end(), extra.begin(), extra.end());
  return TinyRun(root, settings);
}

int count_lines_containing(const ChildResult& result, const std::string& word) {
  int count = 0;
  for (const auto& line : result.err_lines()) count += line.find(word) != std::string::npos;
  return count;
}

::testing::AssertionResult trained(const ChildResult& result) {
  if (result.exit_code == 0 && result.term_signal == 0 && !result.timed_out) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << result.status() << "\n" << result.err;
}

TEST(BadCorpus, EmptyFileIsAnErrorNamingIt) {
  ScratchDir dir("corpus");
  write_text(dir / "empty.txt", "");
  const auto run = corpus_run(dir.path(), "[" + (dir / "empty.txt").string() + "]");
  EXPECT_TRUE(clean_failure(run.run(), kExitBadUsage, {"empty.txt"}, Preceding::any_logs));
}

TEST(BadCorpus, WhitespaceOnlyFileIsAnErrorNamingIt) {
  ScratchDir dir("corpus");
  write_text(dir / "blank.txt", "\n\n   \n\t\n\r\n");
  const auto run = corpus_run(dir.path(), "[" + (dir / "blank.txt").string() + "]");
  EXPECT_TRUE(clean_failure(run.run(), kExitBadUsage, {"blank.txt"}, Preceding::any_logs));
}

TEST(BadCorpus, BinaryFileAloneIsAnError) {
  ScratchDir dir("corpus");
  std::string bytes;
  for (int i = 0; i < 5000; ++i) bytes.push_back(static_cast<char>((i * 7919) % 256));
  write_text(dir / "blob.bin", bytes);
  const auto run = corpus_run(dir.path(), "[" + (dir / "blob.bin").string() + "]");
  EXPECT_TRUE(clean_failure(run.run(), kExitBadUsage, {"blob.bin|data.train_files"},
                            Preceding::any_logs));
}

TEST(BadCorpus, BinaryFileBesideTextIsSkippedWithAWarning) {
  ScratchDir dir("corpus");
  write_text(dir / "blob.bin", std::string("\x7f" "ELF\0\0\0\x01garbage", 15));
  const auto run = corpus_run(dir.path(), "[" + (dir / "blob.bin").string() + ", " +
                                              std::string(MLM_FIXTURES_DIR) +
                                              "/corpus/train.txt]");
  const auto result = run.run();
  EXPECT_TRUE(trained(result));
  EXPECT_EQ(count_lines_containing(result, "blob.bin"), 1) << result.err;
}

TEST(BadCorpus, BinaryFileUnderOnBadRecordErrorIsAnError) {
  ScratchDir dir("corpus");
  write_text(dir / "blob.bin", std::string("text\0more", 9));
  const auto run = corpus_run(dir.path(),
                              "[" + std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt, " +
                                  (dir / "blob.bin").string() + "]",
                              {"data.on_bad_record=error"});
  EXPECT_TRUE(clean_failure(run.run(), kExitBadUsage, {"blob.bin"}, Preceding::any_logs));
}

TEST(BadCorpus, InvalidUtf8IsRepairedAndLoggedOnce) {
  ScratchDir dir("corpus");
  std::string text = fixture_text();
  // Every kind of bad sequence, many times: lone continuation, truncated, overlong,
  // surrogate, above U+10FFFF, invalid lead bytes.
  const std::string bad[] = {"\x80", "\xc3", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80",
                             "\xf4\x90\x80\x80", "\xfe", "\xff"};
  for (size_t at = 100, i = 0; at < text.size(); at += 997, ++i) text.insert(at, bad[i % 8]);
  write_text(dir / "bad_utf8.txt", text);
  const auto run = corpus_run(dir.path(), "[" + (dir / "bad_utf8.txt").string() + "]");
  const auto result = run.run();
  EXPECT_TRUE(trained(result));
  EXPECT_EQ(count_lines_containing(result, "UTF-8"), 1) << result.err;
}

std::string jsonl_with_garbage() {
  std::string text = read_text(fs::path(MLM_FIXTURES_DIR) / "corpus/docs.jsonl");
  text += "this is not json\n";
  text += "{\"text\": \"unterminated\n";
  text += "{\"title\": \"no text field\"}\n";
  text += "{\"text\": 42}\n";
  text += "[1, 2, 3]\n";
  text += "null\n";
  text += read_text(fs::path(MLM_FIXTURES_DIR) / "corpus/docs.jsonl");
  return text;
}

TEST(BadCorpus, JsonLinesGarbageIsSkippedWithOneWarning) {
  ScratchDir dir("corpus");
  write_text(dir / "garbage.jsonl", jsonl_with_garbage());
  const auto run = corpus_run(dir.path(), "[" + (dir / "garbage.jsonl").string() + "]");
  const auto result = run.run();
  EXPECT_TRUE(trained(result));
  EXPECT_EQ(count_lines_containing(result, "garbage.jsonl"), 1) << result.err;
}

TEST(BadCorpus, JsonLinesGarbageUnderOnBadRecordErrorNamesFileAndLine) {
  ScratchDir dir("corpus");
  write_text(dir / "garbage.jsonl", jsonl_with_garbage());
  const std::string good = read_text(fs::path(MLM_FIXTURES_DIR) / "corpus/docs.jsonl");
  const int64_t first_bad_line = 1 + std::count(good.begin(), good.end(), '\n');
  const auto run = corpus_run(dir.path(), "[" + (dir / "garbage.jsonl").string() + "]",
                              {"data.on_bad_record=error"});
  EXPECT_TRUE(clean_failure(run.run(), kExitBadUsage,
                            {"garbage.jsonl:" + std::to_string(first_bad_line)}, Preceding::any_logs));
}

TEST(BadCorpus, JsonLinesWithoutTheTextFieldIsAnError) {
  ScratchDir dir("corpus");
  std::string text;
  for (int i = 0; i < 50; ++i) text += "{\"body\": \"document number " + std::to_string(i) + "\"}\n";
  write_text(dir / "no_field.jsonl", text);
  const auto run = corpus_run(dir.path(), "[" + (dir / "no_field.jsonl").string() + "]");
  const auto result = run.run();
  EXPECT_TRUE(clean_failure(result, kExitBadUsage, {"no_field.jsonl"}, Preceding::any_logs));
}

TEST(BadCorpus, DirectoryIsAnErrorNamingIt) {
  ScratchDir dir("corpus");
  fs::create_directories(dir / "shards");
  const auto run = corpus_run(dir.path(), "[" + (dir / "shards").string() + "]");
  EXPECT_TRUE(clean_failure(run.run(), kExitBadUsage, {(dir / "shards").string()}, Preceding::any_logs));
}

// A file without read permission. Root ignores permissions, so as root (CI containers) the
// trainer runs as nobody (setpriv, util-linux), for which the permissions hold.
TEST(BadCorpus, UnreadableFileIsAnErrorNamingIt) {
  ScratchDir dir("corpus");
  write_text(dir / "secret.txt", fixture_text());
  fs::permissions(dir / "secret.txt", fs::perms::none);
  const auto run = corpus_run(dir.path(), "[" + (dir / "secret.txt").string() + "]");
  auto options = run.command({}, 120);
  if (geteuid() == 0) {
    const char* setpriv = "/usr/bin/setpriv";
    ASSERT_TRUE(fs::exists(setpriv)) << "running as root needs " << setpriv
                                     << " to run the trainer as an unprivileged user";
    options.argv.insert(options.argv.begin(),
                        {setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"});
    fs::permissions(dir.path(), fs::perms::all);  // nobody creates the run directory in it
  }
  EXPECT_TRUE(clean_failure(run_child(options), kExitBadUsage, {"secret.txt"}, Preceding::any_logs));
}

// A file that exists but cannot be opened for reading even by root: a Unix socket
// (open() fails with ENXIO).
TEST(BadCorpus, SocketFileIsAnErrorNamingIt) {
  ScratchDir dir("corpus");
  const fs::path path = dir / "train.sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.string().size(), sizeof(address.sun_path));
  std::strcpy(address.sun_path, path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const auto run = corpus_run(dir.path(), "[" + path.string() + "]");
  const auto result = run.run();
  close(fd);
  EXPECT_TRUE(clean_failure(result, kExitBadUsage, {"train.sock"}, Preceding::any_logs));
}

// One 100 MB line of real words: read in pieces, so the run's peak memory is close to that of
// a run on the small fixture (measured side by side), far below the line's size.
TEST(BadCorpus, HundredMegabyteSingleLineKeepsMemoryBounded) {
  ScratchDir dir("corpus");
  std::string words = fixture_text();
  std::replace(words.begin(), words.end(), '\n', ' ');
  {
    std::ofstream out(dir / "one_line.txt", std::ios::binary);
    for (size_t written = 0; written < (100u << 20); written += words.size()) out << words;
  }
  ASSERT_GE(fs::file_size(dir / "one_line.txt"), 100u << 20);
  const auto baseline =
      corpus_run(dir.path() / "baseline",
                 "[" + std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt]")
          .run();
  ASSERT_TRUE(trained(baseline));
  const auto huge =
      corpus_run(dir.path() / "huge", "[" + (dir / "one_line.txt").string() + "]").run();
  ASSERT_TRUE(trained(huge));
  RecordProperty("baseline_peak_rss_kb", std::to_string(baseline.max_rss_kb));
  RecordProperty("huge_line_peak_rss_kb", std::to_string(huge.max_rss_kb));
  std::printf("peak RSS: fixture corpus %lld KiB, 100 MB single line %lld KiB (%.1fs)\n",
              static_cast<long long>(baseline.max_rss_kb), static_cast<long long>(huge.max_rss_kb),
              huge.wall_s);
  // The reader buffers at most ~2 MiB of a line; tokenized pieces of 1 MiB documents add a few
  // MiB more. 48 MiB of headroom is far below the 100 MiB a whole-line read would need.
  EXPECT_LT(huge.max_rss_kb, baseline.max_rss_kb + 48 * 1024);
}

// The corpus is truncated to a few lines while the trainer streams it. The train split
// repeats forever, so the reader's early end of file is the end of an epoch and the next
// epoch reads the shortened file: the run trains every step and exits 0 (docs/ARCHITECTURE.md,
// "data": the train split repeats forever). The run is long enough that the trainer consumes
// everything read before the cut (the pipeline reads ahead about a megabyte) and goes on in
// later epochs of the short file; a one-layer, 32-wide model keeps that to seconds.
TEST(BadCorpus, FileThatShrinksWhileReadEndsTheEpochAndTrainingGoesOn) {
  ScratchDir dir("corpus");
  const fs::path path = dir / "shrinking.txt";
  const std::string text = fixture_text();
  {
    std::ofstream out(path, std::ios::binary);
    for (size_t written = 0; written < (20u << 20); written += text.size()) out << text;
  }
  constexpr int64_t kSteps = 160;  // 160 x 128 sequences of 64: ~2.5 MB of text
  const auto run = corpus_run(
      dir.path(), "[" + path.string() + "]",
      {"train.max_steps=" + std::to_string(kSteps), "data.doc_separator=line",
       "train.micro_batch_size=128", "model.num_hidden_layers=1", "model.hidden_size=32",
       "model.num_attention_heads=2", "model.intermediate_size=64"});
  Child child(run.command({}, 180));
  ASSERT_TRUE(child.wait_until([&] { return last_logged_step(run.run_dir()) >= 2; }, 120))
      << "the run did not start";
  ASSERT_EQ(truncate(path.c_str(), 4096), 0);
  const auto result = child.wait();
  ASSERT_TRUE(trained(result));
  for (const auto& marker : kCrashMarkers) {
    EXPECT_EQ(result.err.find(marker), std::string::npos) << marker << "\n" << result.err;
  }
  const auto metrics = read_metrics(run.run_dir());
  ASSERT_EQ(static_cast<int64_t>(metrics.train.size()), kSteps);
  for (const auto& [step, row] : metrics.train) {
    EXPECT_TRUE(row["loss"].is_number()) << "step " << step << ": " << row.dump();
  }
  // The stream went past the cut: the final position is in a later epoch, inside the 4 KiB
  // that are left of the file.
  const auto state = nlohmann::json::parse(read_text(run.checkpoint(kSteps) / "trainer_state.json"));
  const auto& position = state["ranks"][0]["data_position"];
  EXPECT_GE(position["epoch"].get<int64_t>(), 1) << position.dump();
  EXPECT_LE(position["byte_offset"].get<int64_t>(), 4096) << position.dump();
}

}  // namespace
}  // namespace mlm::fault

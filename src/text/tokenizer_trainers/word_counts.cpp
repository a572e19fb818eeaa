// One reader thread hands batches of documents to counting threads through a bounded queue;
// each counting thread keeps its own map, and the maps are summed at the end.
#include "mlm/text/tokenizer_trainers/word_counts.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "mlm/text/corpus/document_reader.h"

namespace mlm::text::tokenizer_trainers {
namespace {

constexpr size_t kBatchBytes = size_t{1} << 20;  // documents handed out together
constexpr size_t kQueuedBatches = 8;             // per counting thread: bounds memory

bool blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

// Splits `text` at '\n' and counts the words of each non-blank line into `counts`.
void count_text(std::string_view text, const WordSplitter& splitter, WordCounts& counts, CountingStats& stats) {
  const auto add = [&counts](std::string_view word) {
    if (auto it = counts.find(word); it != counts.end()) {
      ++it->second;
    } else {
      counts.emplace(std::string(word), 1);
    }
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(pos, end - pos);
    pos = end + 1;
    if (blank(line)) continue;
    ++stats.lines;
    splitter(line, add);
  }
}

class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}
  void push(std::vector<std::string> batch) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return batches_.size() < capacity_; });
    batches_.push_back(std::move(batch));
    not_empty_.notify_one();
  }
  bool pop(std::vector<std::string>& batch) {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !batches_.empty() || closed_; });
    if (batches_.empty()) return false;
    batch = std::move(batches_.front());
    batches_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_;
  std::deque<std::vector<std::string>> batches_;
  bool closed_ = false;
};

void add_counts(WordCounts& into, WordCounts&& from) {
  if (into.size() < from.size()) std::swap(into, from);
  for (auto& [word, count] : from) into[word] += count;
}

}  // namespace

WordCounts count_words(const std::vector<CorpusFile>& files, const ReadOptions& read,
                       const WordSplitterFactory& make_splitter, int threads, CountingStats* stats) {
  const int counters = std::max(1, threads);
  BatchQueue queue(kQueuedBatches * static_cast<size_t>(counters));
  std::vector<WordCounts> counts(counters);
  std::vector<CountingStats> thread_stats(counters);
  std::vector<std::thread> workers;
  for (int t = 0; t < counters; ++t) {
    workers.emplace_back([&, t] {
      const WordSplitter splitter = make_splitter();
      std::vector<std::string> batch;
      while (queue.pop(batch)) {
        for (const auto& text : batch) count_text(text, splitter, counts[t], thread_stats[t]);
      }
    });
  }
  CountingStats read_stats;
  std::exception_ptr error;
  try {
    std::vector<std::string> batch;
    size_t batch_bytes = 0;
    Document doc;
    for (const auto& file : files) {
      DocumentReader reader(file, read);
      while (reader.next(doc)) {
        ++read_stats.documents;
        read_stats.bytes += static_cast<int64_t>(doc.text.size());
        batch_bytes += doc.text.size();
        batch.push_back(std::move(doc.text));
        if (batch_bytes >= kBatchBytes) {
          queue.push(std::move(batch));
          batch.clear();
          batch_bytes = 0;
        }
      }
    }
    if (!batch.empty()) queue.push(std::move(batch));
  } catch (...) {
    error = std::current_exception();
  }
  queue.close();
  for (auto& worker : workers) worker.join();
  if (error) std::rethrow_exception(error);
  WordCounts total = std::move(counts[0]);
  for (int t = 1; t < counters; ++t) add_counts(total, std::move(counts[t]));
  if (stats) {
    *stats = read_stats;
    for (const auto& s : thread_stats) stats->lines += s.lines;
  }
  return total;
}

WordCounts count_words(const std::vector<std::string>& lines, const WordSplitter& splitter) {
  WordCounts counts;
  CountingStats stats;
  for (const auto& line : lines) count_text(line, splitter, counts, stats);
  return counts;
}

}  // namespace mlm::text::tokenizer_trainers

#pragma once
// Documents in, token ids out, in stream order: a reader thread cuts the document stream into
// numbered batches, `num_workers` threads tokenize them, and next() hands them back in
// batch order, so the output never depends on thread timing. Memory is bounded by the bytes
// of batches in flight. With num_workers == 0 everything runs on the caller's thread.
// With sentences kept, each sentence (text/sentence_split.h: a line) is encoded on its own
// and the document carries where each ends; otherwise the document is encoded whole.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "mlm/data/document_stream.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

struct TokenizedDocument {
  std::vector<int32_t> ids;
  // With sentences kept: the token offset just past each sentence, ascending, the last one
  // ids.size() (sentences without tokens are left out). Empty otherwise.
  std::vector<int64_t> sentence_ends;
  int64_t epoch = 0;
  StreamCursor start, end;
};

class TokenizingPipeline {
 public:
  TokenizingPipeline(DocumentStream stream, const text::Tokenizer& tokenizer, int num_workers,
                     bool keep_sentences = false);
  ~TokenizingPipeline();
  TokenizingPipeline(const TokenizingPipeline&) = delete;
  TokenizingPipeline& operator=(const TokenizingPipeline&) = delete;

  /// The next event; a reading or tokenizing error is rethrown here, in stream order.
  StreamEvent next(TokenizedDocument& doc);

  text::ReaderCounters reader_counters() const;
  int64_t documents() const;

 private:
  struct Item {
    StreamEvent event = StreamEvent::document;
    std::string text;
    TokenizedDocument doc;
  };
  struct Batch {
    uint64_t number = 0;
    std::vector<Item> items;
    size_t bytes = 0;
    bool last = false;
    std::exception_ptr error;
  };

  Batch read_batch();
  void tokenize(Batch& batch) const;
  void reader_loop();
  void worker_loop();

  DocumentStream stream_;
  const text::Tokenizer& tokenizer_;
  const int num_workers_;
  const bool keep_sentences_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> todo_;          // read, waiting for a worker
  std::map<uint64_t, Batch> done_;  // tokenized, waiting for their turn
  size_t bytes_in_flight_ = 0;
  bool stop_ = false;
  uint64_t next_number_ = 0;        // reader side
  uint64_t wanted_ = 0;             // consumer side
  text::ReaderCounters counters_;   // copied from the stream by the reader thread
  int64_t documents_ = 0;

  Batch current_;
  size_t current_item_ = 0;
  bool finished_ = false;
  std::exception_ptr failed_;  // an error, rethrown by every later next()
  std::vector<std::thread> threads_;
};

}  // namespace mlm::data

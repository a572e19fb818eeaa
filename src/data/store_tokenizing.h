#pragma once
// The parallel driver of `mlm-data prepare`: a reader thread cuts one split's documents into
// numbered batches, `workers` threads tokenize them sentence by sentence, and next() hands
// them back in batch order, so what the caller writes never depends on the thread count or
// on timing. Documents and sentences are cut exactly as the streaming path cuts them with
// data.packing: sentences (DocumentStream, then TokenizingPipeline's sentence encoding).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mlm/data/document_stream.h"
#include "mlm/data/tokenizing_pipeline.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data::store_detail {

/// Where reading stands in a split's files: for progress, in bytes of the files themselves.
struct InputPosition {
  int64_t file_index = 0;
  int64_t offset = 0;  // bytes of that file consumed (compressed bytes for gzip)
};

struct DocumentBatch {
  std::vector<TokenizedDocument> docs;  // ids, sentence_ends, start and end cursors
  int64_t text_bytes = 0;               // UTF-8 bytes of the documents' text
  InputPosition input;                  // after the batch's last document
  text::ReaderCounters counters;        // bad records and repairs since the start, cumulative
};

/// Encodes `text` sentence by sentence (text/sentence_split.h), as TokenizingPipeline does
/// with sentences kept: sentences without tokens are left out.
void encode_document_sentences(const text::Tokenizer& tokenizer, const std::string& text,
                               TokenizedDocument& doc);

class OrderedTokenizer {
 public:
  /// Reads `stream`'s documents (one pass, no shuffle) from `from` on.
  OrderedTokenizer(StreamOptions stream, StreamCursor from, const text::Tokenizer& tokenizer, int workers);
  ~OrderedTokenizer();
  OrderedTokenizer(const OrderedTokenizer&) = delete;
  OrderedTokenizer& operator=(const OrderedTokenizer&) = delete;

  /// The next batch in order; false after the last. A reading or tokenizing error is
  /// rethrown here, after every batch before it.
  bool next(DocumentBatch& out);

 private:
  struct Batch {
    uint64_t number = 0;
    std::vector<std::string> texts;
    DocumentBatch out;
    size_t bytes = 0;
    bool last = false;
    std::exception_ptr error;
  };

  Batch read_batch();
  void tokenize(Batch& batch) const;
  void reader_loop();
  void worker_loop();

  DocumentStream stream_;
  int64_t num_files_;
  const text::Tokenizer& tokenizer_;
  const size_t max_in_flight_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> todo_;          // read, waiting for a worker
  std::map<uint64_t, Batch> done_;  // tokenized, waiting for their turn
  size_t bytes_in_flight_ = 0;
  uint64_t next_number_ = 0;        // reader side
  uint64_t wanted_ = 0;             // consumer side
  bool stop_ = false;
  bool finished_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mlm::data::store_detail

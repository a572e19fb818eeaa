#pragma once
// Documents in, token ids out, in stream order: a reader thread cuts the document stream into
// numbered batches, `num_workers` threads tokenize them, and next() hands them back in
// batch order, so the output never depends on thread timing. Memory is bounded by the bytes
// of batches in flight. With num_workers == 0 everything runs on the caller's thread.
// With sentences kept, each sentence (text/sentence_split.h: a line) is encoded on its own
// and the document carries where each ends; otherwise the document is encoded whole.
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "mlm/data/stream/document_stream.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/ordered_workers.h"

namespace mlm::data {

struct TokenizedDocument {
  std::vector<int32_t> ids;
  // With sentences kept: the token offset just past each sentence, ascending, the last one
  // ids.size() (sentences without tokens are left out). Empty otherwise.
  std::vector<int64_t> sentence_ends;
  int64_t epoch = 0;
  StreamCursor start, end;
};

/// Encodes `text` sentence by sentence (text/sentence_split.h: a line), into doc.ids and
/// doc.sentence_ends; sentences without tokens are left out. The prepared store cuts its
/// documents with the same function.
void encode_sentences(const text::Tokenizer& tokenizer, const std::string& text, TokenizedDocument& doc);

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
    const text::CorpusFile* file = nullptr;  // for errors
  };
  struct Batch {
    std::vector<Item> items;
    size_t bytes = 0;
    bool last = false;
    std::exception_ptr error;
  };

  Batch read_batch();
  OrderedWorkers<Batch>::Read read();  // on the reader thread
  void tokenize(Batch& batch) const;

  DocumentStream stream_;
  const text::Tokenizer& tokenizer_;
  const bool keep_sentences_;

  mutable std::mutex mutex_;        // guards counters_ and documents_
  text::ReaderCounters counters_;   // copied from the stream by the reader
  int64_t documents_ = 0;

  Batch current_;
  size_t current_item_ = 0;
  bool finished_ = false;
  std::exception_ptr failed_;  // an error, rethrown by every later next()
  OrderedWorkers<Batch> batches_;  // last: its threads use the members above
};

}  // namespace mlm::data

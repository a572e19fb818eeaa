#include "mlm/data/stream/tokenizing_pipeline.h"

#include "mlm/text/corpus/sentence_split.h"
#include "mlm/text/regex_budget.h"

namespace mlm::data {
namespace {

// A batch is cut at this many text bytes or at an epoch end: big enough to amortize the
// hand-offs, small enough to keep every worker busy.
constexpr size_t kBatchBytes = 128 * 1024;
constexpr size_t kBatchDocuments = 1024;
// Read-ahead bounds over the batches not yet handed to the consumer: bytes (text, then ids)
// for memory, and a count so that a small corpus is not read and tokenized many epochs ahead.
constexpr size_t kMaxBytesInFlight = 32u << 20;
size_t max_batches_in_flight(int workers) { return 2 * static_cast<size_t>(workers) + 2; }

}  // namespace

void encode_sentences(const text::Tokenizer& tokenizer, const std::string& text, TokenizedDocument& doc) {
  doc.ids.clear();
  doc.sentence_ends.clear();
  std::vector<int32_t> sentence;
  for (const auto line : text::split_sentences(text)) {
    tokenizer.encode(line, sentence);
    if (sentence.empty()) continue;
    doc.ids.insert(doc.ids.end(), sentence.begin(), sentence.end());
    doc.sentence_ends.push_back(static_cast<int64_t>(doc.ids.size()));
  }
}

TokenizingPipeline::TokenizingPipeline(DocumentStream stream, const text::Tokenizer& tokenizer,
                                       int num_workers, bool keep_sentences)
    : stream_(std::move(stream)), tokenizer_(tokenizer), keep_sentences_(keep_sentences),
      batches_(num_workers, {kMaxBytesInFlight, max_batches_in_flight(num_workers)}, [this] { return read(); },
               [this](Batch& batch) { tokenize(batch); }) {}

TokenizingPipeline::~TokenizingPipeline() = default;

TokenizingPipeline::Batch TokenizingPipeline::read_batch() {
  Batch batch;
  try {
    while (batch.bytes < kBatchBytes && batch.items.size() < kBatchDocuments) {
      Item item;
      StreamDocument doc;
      item.event = stream_.next(doc);
      if (item.event == StreamEvent::document) {
        batch.bytes += doc.text.size() + 64;
        item.text = std::move(doc.text);
        item.doc.epoch = doc.epoch;
        item.doc.start = doc.start;
        item.doc.end = doc.end;
        item.file = doc.file;
        batch.items.push_back(std::move(item));
        continue;
      }
      batch.last = item.event == StreamEvent::end_of_stream;
      batch.items.push_back(std::move(item));
      break;
    }
  } catch (...) {
    batch.error = std::current_exception();
    batch.last = true;
  }
  return batch;
}

void TokenizingPipeline::tokenize(Batch& batch) const {
  if (batch.error) return;
  try {
    for (auto& item : batch.items) {
      if (item.event != StreamEvent::document) continue;
      try {
        if (keep_sentences_) {
          encode_sentences(tokenizer_, item.text, item.doc);
        } else {
          tokenizer_.encode(item.text, item.doc.ids);
        }
      } catch (const text::RegexBudgetError& e) {
        throw e.at(describe_position(item.file, item.doc.start));
      }
      std::string().swap(item.text);
    }
  } catch (...) {
    batch.error = std::current_exception();
  }
}

OrderedWorkers<TokenizingPipeline::Batch>::Read TokenizingPipeline::read() {
  Batch batch = read_batch();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    counters_ = stream_.counters();
  }
  const size_t bytes = batch.bytes;
  const bool last = batch.last;
  return {std::move(batch), bytes, last};
}

StreamEvent TokenizingPipeline::next(TokenizedDocument& doc) {
  if (failed_) std::rethrow_exception(failed_);
  for (;;) {
    if (current_item_ < current_.items.size()) {
      auto& item = current_.items[current_item_++];
      if (item.event == StreamEvent::document) {
        doc = std::move(item.doc);
        std::lock_guard<std::mutex> lock(mutex_);
        ++documents_;
      } else if (item.event == StreamEvent::end_of_stream) {
        finished_ = true;
      }
      return item.event;
    }
    if (finished_) return StreamEvent::end_of_stream;
    current_ = batches_.take();
    current_item_ = 0;
    if (current_.error) {
      failed_ = current_.error;
      current_.items.clear();
      std::rethrow_exception(failed_);
    }
  }
}

text::ReaderCounters TokenizingPipeline::reader_counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

int64_t TokenizingPipeline::documents() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return documents_;
}

}  // namespace mlm::data

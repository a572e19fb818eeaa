#include "store_tokenizing.h"

#include "mlm/text/regex_budget.h"

namespace mlm::data::store_detail {
namespace {

// Batches as in TokenizingPipeline: big enough to amortize the hand-offs, small enough to
// keep every worker busy; the read-ahead is bounded in bytes and in batches.
constexpr size_t kStoreBatchBytes = 256 * 1024;
constexpr size_t kStoreBatchDocuments = 1024;
constexpr size_t kStoreMaxBytesInFlight = 64u << 20;

}  // namespace

OrderedTokenizer::OrderedTokenizer(StreamOptions stream, StreamCursor from,
                                   const text::Tokenizer& tokenizer, int workers)
    : stream_([&] {
        stream.shuffle_files = false;
        stream.repeat = false;
        return DocumentStream(stream, 0, from);
      }()),
      num_files_(static_cast<int64_t>(stream.files.size())),
      tokenizer_(tokenizer),
      batches_(std::max(1, workers), {kStoreMaxBytesInFlight, 2 * static_cast<size_t>(std::max(1, workers)) + 2},
               [this] {
                 Batch batch = read_batch();
                 const size_t bytes = batch.bytes;
                 const bool last = batch.last;
                 return OrderedWorkers<Batch>::Read{std::move(batch), bytes, last};
               },
               [this](Batch& batch) { tokenize(batch); }) {}

OrderedTokenizer::Batch OrderedTokenizer::read_batch() {
  Batch batch;
  try {
    while (batch.bytes < kStoreBatchBytes && batch.texts.size() < kStoreBatchDocuments) {
      StreamDocument doc;
      const StreamEvent event = stream_.next(doc);
      if (event == StreamEvent::end_of_stream) {
        batch.last = true;
        break;
      }
      if (event != StreamEvent::document) continue;  // end_of_epoch: end_of_stream follows
      batch.bytes += doc.text.size() + 64;
      batch.out.text_bytes += static_cast<int64_t>(doc.text.size());
      TokenizedDocument tokenized;
      tokenized.start = doc.start;
      tokenized.end = doc.end;
      batch.out.input = {doc.end.file_index, stream_.input_offset()};
      batch.out.docs.push_back(std::move(tokenized));
      batch.texts.push_back(std::move(doc.text));
      batch.files.push_back(doc.file);
    }
  } catch (...) {
    batch.error = std::current_exception();
    batch.last = true;
  }
  if (batch.last) batch.out.input = {num_files_, 0};
  batch.out.counters = stream_.counters();
  return batch;
}

void OrderedTokenizer::tokenize(Batch& batch) const {
  if (batch.error) return;
  try {
    for (size_t i = 0; i < batch.texts.size(); ++i) {
      try {
        encode_sentences(tokenizer_, batch.texts[i], batch.out.docs[i]);
      } catch (const text::RegexBudgetError& e) {
        throw e.at(describe_position(batch.files[i], batch.out.docs[i].start));
      }
      std::string().swap(batch.texts[i]);
    }
  } catch (...) {
    batch.error = std::current_exception();
  }
}

bool OrderedTokenizer::next(DocumentBatch& out) {
  if (finished_) return false;
  Batch batch = batches_.take();
  if (batch.error) {
    finished_ = true;
    std::rethrow_exception(batch.error);
  }
  finished_ = batch.last;
  out = std::move(batch.out);
  return !out.docs.empty() || !finished_;
}

}  // namespace mlm::data::store_detail

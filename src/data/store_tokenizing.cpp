#include "store_tokenizing.h"

#include "mlm/text/sentence_split.h"

namespace mlm::data::store_detail {
namespace {

// Batches as in TokenizingPipeline: big enough to amortize the hand-offs, small enough to
// keep every worker busy; the read-ahead is bounded in bytes and in batches.
constexpr size_t kStoreBatchBytes = 256 * 1024;
constexpr size_t kStoreBatchDocuments = 1024;
constexpr size_t kStoreMaxBytesInFlight = 64u << 20;

}  // namespace

void encode_document_sentences(const text::Tokenizer& tokenizer, const std::string& text,
                               TokenizedDocument& doc) {
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

OrderedTokenizer::OrderedTokenizer(StreamOptions stream, StreamCursor from,
                                   const text::Tokenizer& tokenizer, int workers)
    : stream_([&] {
        stream.shuffle_files = false;
        stream.repeat = false;
        return DocumentStream(stream, 0, from);
      }()),
      num_files_(static_cast<int64_t>(stream.files.size())),
      tokenizer_(tokenizer),
      max_in_flight_(2 * static_cast<size_t>(std::max(1, workers)) + 2) {
  threads_.emplace_back([this] { reader_loop(); });
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { worker_loop(); });
}

OrderedTokenizer::~OrderedTokenizer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_) t.join();
}

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
      encode_document_sentences(tokenizer_, batch.texts[i], batch.out.docs[i]);
      std::string().swap(batch.texts[i]);
    }
  } catch (...) {
    batch.error = std::current_exception();
  }
}

void OrderedTokenizer::reader_loop() {
  for (;;) {
    Batch batch = read_batch();
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
      return stop_ || (bytes_in_flight_ < kStoreMaxBytesInFlight && next_number_ - wanted_ < max_in_flight_);
    });
    if (stop_) return;
    batch.number = next_number_++;
    bytes_in_flight_ += batch.bytes;
    const bool last = batch.last;
    todo_.push_back(std::move(batch));
    changed_.notify_all();
    if (last) return;
  }
}

void OrderedTokenizer::worker_loop() {
  for (;;) {
    Batch batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !todo_.empty(); });
      if (stop_) return;
      batch = std::move(todo_.front());
      todo_.pop_front();
    }
    tokenize(batch);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.emplace(batch.number, std::move(batch));
    }
    changed_.notify_all();
  }
}

bool OrderedTokenizer::next(DocumentBatch& out) {
  if (finished_) return false;
  Batch batch;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return done_.count(wanted_) > 0; });
    batch = std::move(done_.extract(wanted_++).mapped());
    bytes_in_flight_ -= batch.bytes;
  }
  changed_.notify_all();
  if (batch.error) {
    finished_ = true;
    std::rethrow_exception(batch.error);
  }
  finished_ = batch.last;
  out = std::move(batch.out);
  return !out.docs.empty() || !finished_;
}

}  // namespace mlm::data::store_detail

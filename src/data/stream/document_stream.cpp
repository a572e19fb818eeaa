#include "mlm/data/stream/document_stream.h"

#include "mlm/data/seeded_random.h"
#include "mlm/util/fnv1a.h"

namespace mlm::data {

bool is_held_out(const std::string& text, double fraction) {
  if (fraction <= 0) return false;
  // FNV-1a, then a finalizer for uniform top bits.
  const double u = static_cast<double>(splitmix64(fnv1a(text)) >> 11) * 0x1p-53;
  return u < fraction;
}

DocumentStream::DocumentStream(StreamOptions options, int64_t epoch, StreamCursor cursor)
    : options_(std::move(options)), epoch_(epoch), cursor_(cursor) {
  start_epoch();
}

void DocumentStream::start_epoch() {
  const auto n = static_cast<int64_t>(options_.files.size());
  order_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order_[i] = i;
  if (options_.shuffle_files) {
    order_ = seeded_permutation(n, mix_seed({options_.seed, 0xF11E5ull, static_cast<uint64_t>(epoch_)}));
  }
}

text::ReaderCounters DocumentStream::counters() const {
  auto c = finished_;
  if (reader_) {
    c.bad_records += reader_->counters().bad_records;
    c.invalid_utf8_fixes += reader_->counters().invalid_utf8_fixes;
  }
  return c;
}

std::string describe_position(const text::CorpusFile* file, const StreamCursor& at) {
  if (!file) return "file #" + std::to_string(at.file_index) + ":" + std::to_string(at.line);
  if (text::is_table(file->format)) return text::describe_place(*file, at.line);
  return text::describe_place(*file, at.line) + " (byte " + std::to_string(at.offset) + ")";
}

StreamEvent DocumentStream::next(StreamDocument& doc) {
  if (ended_) return StreamEvent::end_of_stream;
  const auto num_files = static_cast<int64_t>(options_.files.size());
  for (;;) {
    if (!reader_) {
      if (cursor_.file_index >= num_files) {
        // End of the epoch: the next call starts the following one (train) or ends (valid).
        if (!options_.repeat) {
          ended_ = true;
        } else {
          ++epoch_;
          cursor_ = StreamCursor{};
          start_epoch();
        }
        return StreamEvent::end_of_epoch;
      }
      reader_ = std::make_unique<text::DocumentReader>(options_.files[order_[cursor_.file_index]],
                                                       options_.read, cursor_.offset, cursor_.line);
    }
    if (!reader_->next(doc_)) {
      finished_.bad_records += reader_->counters().bad_records;
      finished_.invalid_utf8_fixes += reader_->counters().invalid_utf8_fixes;
      reader_.reset();
      cursor_ = StreamCursor{cursor_.file_index + 1, 0, 1, cursor_.doc_index};
      continue;
    }
    const StreamCursor start{cursor_.file_index, doc_.offset, doc_.line, cursor_.doc_index};
    cursor_.offset = doc_.end_offset;
    cursor_.line = doc_.end_line;
    if (options_.holdout != Holdout::all &&
        is_held_out(doc_.text, options_.held_out_fraction) != (options_.holdout == Holdout::held_out_only)) {
      continue;
    }
    ++cursor_.doc_index;
    doc.text.swap(doc_.text);
    doc.epoch = epoch_;
    doc.start = start;
    doc.end = cursor_;
    doc.file = &options_.files[order_[cursor_.file_index]];
    return StreamEvent::document;
  }
}

}  // namespace mlm::data

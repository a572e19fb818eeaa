#include "mlm/data/packer.h"

#include <algorithm>

#include "mlm/data/seeded_random.h"

namespace mlm::data {

Packer::Packer(PackerOptions options, TokenizingPipeline& source, PackPosition start)
    : options_(options), source_(source), first_skip_(start.token_offset), epoch_(start.epoch),
      after_(start) {}

PackPosition Packer::position() const {
  if (current_) return {current_->epoch, current_->start, consumed_};
  return after_;
}

bool Packer::fetch(TokenizedDocument& doc) {
  if (ahead_) {
    doc = std::move(*ahead_);
    ahead_.reset();
    return true;
  }
  if (pending_) return false;
  const StreamEvent event = source_.next(doc);
  if (event == StreamEvent::document) return true;
  pending_ = event;
  return false;
}

bool Packer::ensure_current() {
  while (!current_) {
    TokenizedDocument doc;
    if (!fetch(doc)) return false;
    epoch_ = doc.epoch;
    consumed_ = first_ ? first_skip_ : 0;
    first_ = false;
    if (consumed_ >= static_cast<int64_t>(doc.ids.size())) {  // empty (or fully packed)
      after_ = {doc.epoch, doc.end, 0};
      continue;
    }
    current_ = std::move(doc);
  }
  return true;
}

const TokenizedDocument* Packer::peek_ahead() {
  while (!ahead_ && !pending_) {
    TokenizedDocument doc;
    const StreamEvent event = source_.next(doc);
    if (event != StreamEvent::document) {
      pending_ = event;
    } else if (!doc.ids.empty()) {
      ahead_ = std::move(doc);
    }
  }
  return ahead_ ? &*ahead_ : nullptr;
}

void Packer::finish_current() {
  after_ = {current_->epoch, current_->end, 0};
  current_.reset();
  consumed_ = 0;
}

StreamEvent Packer::next(PackedSequence& out) {
  for (;;) {
    const Packed packed = options_.objective == config::Objective::mlm ? pack_full_sentences(out)
                                                                        : pack_pair(out);
    if (packed == Packed::sequence) return StreamEvent::document;
    if (packed == Packed::nothing) continue;
    const StreamEvent event = pending_.value_or(StreamEvent::end_of_stream);
    if (event == StreamEvent::end_of_epoch) {
      pending_.reset();
      ++epoch_;
      after_ = {epoch_, StreamCursor{}, 0};
    }
    return event;
  }
}

Packer::Packed Packer::pack_full_sentences(PackedSequence& out) {
  const auto capacity = static_cast<size_t>(options_.seq_len - 2);
  body_.clear();
  while (body_.size() < capacity) {
    if (!ensure_current()) break;
    const auto& ids = current_->ids;
    if (!body_.empty() && consumed_ == 0) {
      // A new document joins the sequence after a [SEP]; not when only the [SEP] would fit.
      if (capacity - body_.size() < 2) break;
      body_.push_back(options_.ids.sep);
    }
    const size_t take = std::min(capacity - body_.size(), ids.size() - static_cast<size_t>(consumed_));
    body_.insert(body_.end(), ids.begin() + consumed_, ids.begin() + consumed_ + take);
    consumed_ += static_cast<int64_t>(take);
    if (consumed_ == static_cast<int64_t>(ids.size())) {
      finish_current();
      if (!options_.cross_documents) break;
    }
  }
  if (body_.empty()) return Packed::end;
  out.ids.clear();
  out.ids.reserve(body_.size() + 2);
  out.ids.push_back(options_.ids.cls);
  out.ids.insert(out.ids.end(), body_.begin(), body_.end());
  out.ids.push_back(options_.ids.sep);
  out.token_type_ids.assign(out.ids.size(), 0);
  out.nsp_label = -1;
  return Packed::sequence;
}

Packer::Packed Packer::pack_pair(PackedSequence& out) {
  if (!ensure_current()) return Packed::end;
  const auto capacity = options_.seq_len - 3;
  const auto& ids = current_->ids;
  const auto n = static_cast<int64_t>(ids.size());
  const int64_t length = std::min(capacity, n - consumed_);
  SeededRandom rng(mix_seed({options_.seed, 0x9A1Bull, static_cast<uint64_t>(current_->epoch),
                             static_cast<uint64_t>(current_->start.doc_index),
                             static_cast<uint64_t>(consumed_)}));
  const bool nsp = options_.objective == config::Objective::nsp;
  const int32_t* a = ids.data() + consumed_;
  int64_t a_len = 0, b_len = 0, used = 0;
  const int32_t* b = nullptr;
  int8_t label = 0;
  if (length < 2) {
    // One token left: NSP can still pair it with a random segment; otherwise it is dropped.
    const TokenizedDocument* other = nsp ? peek_ahead() : nullptr;
    if (other == nullptr) {
      consumed_ += length;
      if (consumed_ == n) finish_current();
      return Packed::nothing;
    }
    a_len = used = length;
    label = 1;
    b_len = std::min<int64_t>(capacity - a_len, static_cast<int64_t>(other->ids.size()));
    b = other->ids.data() + rng.below(other->ids.size() - b_len + 1);
  } else {
    a_len = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(length - 1)));
    b = a + a_len;
    b_len = length - a_len;
    used = length;
    if (nsp) {
      const TokenizedDocument* other = rng.coin() ? peek_ahead() : nullptr;
      if (other != nullptr) {
        label = 1;
        used = a_len;  // the real B stays in the stream for the next sequence
        b_len = std::min<int64_t>(capacity - a_len, static_cast<int64_t>(other->ids.size()));
        b = other->ids.data() + rng.below(other->ids.size() - b_len + 1);
      }
    } else if (rng.coin()) {
      label = 1;
      std::swap(a, b);
      std::swap(a_len, b_len);
    }
  }
  out.ids.clear();
  out.ids.push_back(options_.ids.cls);
  out.ids.insert(out.ids.end(), a, a + a_len);
  out.ids.push_back(options_.ids.sep);
  out.token_type_ids.assign(out.ids.size(), 0);
  out.ids.insert(out.ids.end(), b, b + b_len);
  out.ids.push_back(options_.ids.sep);
  out.token_type_ids.resize(out.ids.size(), 1);
  out.nsp_label = label;
  consumed_ += used;
  if (consumed_ == n) finish_current();
  return Packed::sequence;
}

}  // namespace mlm::data

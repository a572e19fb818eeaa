#include "mlm/data/stream/packer.h"

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
  if (!ahead_.empty()) {
    doc = std::move(ahead_.front());
    ahead_.pop_front();
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

void Packer::read_ahead(size_t count) {
  while (ahead_.size() < count && !pending_) {
    TokenizedDocument doc;
    const StreamEvent event = source_.next(doc);
    if (event != StreamEvent::document) {
      pending_ = event;
    } else if (!doc.ids.empty()) {
      ahead_.push_back(std::move(doc));
    }
  }
}

const TokenizedDocument* Packer::peek_ahead() {
  read_ahead(1);
  return ahead_.empty() ? nullptr : &ahead_.front();
}

void Packer::finish_current() {
  after_ = {current_->epoch, current_->end, 0};
  current_.reset();
  consumed_ = 0;
}

void Packer::advance(int64_t tokens) {
  consumed_ += tokens;
  if (consumed_ == static_cast<int64_t>(current_->ids.size())) finish_current();
}

StreamEvent Packer::next(PackedSequence& out) {
  const bool sentences = options_.packing == config::Packing::sentences;
  const bool pairs = config::trains_sentence_pairs(options_.objective);
  for (;;) {
    const Packed packed = pairs ? (sentences ? pack_sentence_pair(out) : pack_token_pair(out))
                                : (sentences ? pack_sentences(out) : pack_token_chunk(out));
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

void Packer::emit_single(PackedSequence& out) const {
  out.ids.clear();
  out.ids.reserve(body_.size() + 2);
  out.ids.push_back(options_.ids.cls);
  out.ids.insert(out.ids.end(), body_.begin(), body_.end());
  out.ids.push_back(options_.ids.sep);
  out.token_type_ids.assign(out.ids.size(), 0);
  out.document_starts.clear();
  for (int32_t start : body_document_starts_) out.document_starts.push_back(start + 1);  // after [CLS]
  out.nsp_label = -1;
}

void Packer::emit_pair(PackedSequence& out, const int32_t* a, int64_t a_len, const int32_t* b,
                       int64_t b_len, int8_t label) const {
  out.ids.clear();
  out.ids.push_back(options_.ids.cls);
  out.ids.insert(out.ids.end(), a, a + a_len);
  out.ids.push_back(options_.ids.sep);
  out.token_type_ids.assign(out.ids.size(), 0);
  out.ids.insert(out.ids.end(), b, b + b_len);
  out.ids.push_back(options_.ids.sep);
  out.token_type_ids.resize(out.ids.size(), 1);
  out.document_starts.clear();  // A and B are one example
  out.nsp_label = label;
}

Packer::Packed Packer::fill_single(PackedSequence& out, const std::function<int64_t(int64_t room)>& next_take) {
  const int64_t capacity = options_.seq_len - 2;
  body_.clear();
  body_document_starts_.clear();
  while (static_cast<int64_t>(body_.size()) < capacity && ensure_current()) {
    const auto& ids = current_->ids;
    const bool joins = !body_.empty() && consumed_ == 0;  // a new document, after a [SEP]
    const int64_t take = next_take(capacity - static_cast<int64_t>(body_.size()) - (joins ? 1 : 0));
    if (take < 0) break;
    if (joins) {
      body_.push_back(options_.ids.sep);
      body_document_starts_.push_back(static_cast<int32_t>(body_.size()));
    }
    body_.insert(body_.end(), ids.begin() + consumed_, ids.begin() + consumed_ + take);
    const bool document_done = consumed_ + take == static_cast<int64_t>(ids.size());
    advance(take);
    if (document_done && !options_.cross_documents) break;
  }
  if (body_.empty()) return Packed::end;
  emit_single(out);
  return Packed::sequence;
}

Packer::Packed Packer::pack_token_chunk(PackedSequence& out) {
  return fill_single(out, [&](int64_t room) -> int64_t {
    // Not a joining document when only its [SEP] would fit.
    if (room < 1) return -1;
    return std::min(room, static_cast<int64_t>(current_->ids.size()) - consumed_);
  });
}

Packer::Packed Packer::pack_token_pair(PackedSequence& out) {
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
      advance(length);
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
  emit_pair(out, a, a_len, b, b_len, label);
  advance(used);
  return Packed::sequence;
}

}  // namespace mlm::data

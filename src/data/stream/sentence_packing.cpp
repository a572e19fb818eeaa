// The packer's sentence paths (data.packing: sentences); see packer.h for the rules.
#include <algorithm>

#include "mlm/data/stream/packer.h"
#include "mlm/data/seeded_random.h"

namespace mlm::data {
namespace {

/// The end of the sentence holding token `from`: the first sentence end after it.
int64_t sentence_end_after(const TokenizedDocument& doc, int64_t from) {
  const auto& ends = doc.sentence_ends;
  const auto it = std::upper_bound(ends.begin(), ends.end(), from);
  return it == ends.end() ? static_cast<int64_t>(doc.ids.size()) : *it;
}

/// Where the sentence before the one starting at `from` starts, when `from` starts a whole
/// sentence ending at `end` and both fit in `capacity`; -1 otherwise.
int64_t previous_sentence_start(const TokenizedDocument& doc, int64_t from, int64_t end, int64_t capacity) {
  const auto& ends = doc.sentence_ends;
  const auto at = std::lower_bound(ends.begin(), ends.end(), from);
  if (from == 0 || at == ends.end() || *at != from || sentence_end_after(doc, from) != end) return -1;
  const int64_t start = at == ends.begin() ? 0 : *(at - 1);
  return end - start <= capacity ? start : -1;
}

struct Range {
  int64_t begin = 0, end = 0;
};

/// Whole sentences of `doc` from a uniform sentence on, while they fit in `room` (>= 1)
/// tokens; the first one cut to `room` when it alone is longer.
Range sentences_from_random_start(const TokenizedDocument& doc, int64_t room, SeededRandom& rng) {
  const auto& ends = doc.sentence_ends;
  const auto n = static_cast<int64_t>(doc.ids.size());
  if (ends.empty()) return {0, std::min(room, n)};
  const size_t first = rng.below(ends.size());
  Range r{first == 0 ? 0 : ends[first - 1], 0};
  r.end = r.begin;
  for (size_t k = first; k < ends.size() && ends[k] - r.begin <= room; ++k) r.end = ends[k];
  if (r.end == r.begin) r.end = r.begin + room;
  return r;
}

}  // namespace

const TokenizedDocument* Packer::random_other_document(SeededRandom& rng) {
  read_ahead(kNegativeWindow);
  if (ahead_.empty()) return nullptr;
  return &ahead_[rng.below(ahead_.size())];
}

Packer::Packed Packer::pack_sentences(PackedSequence& out) {
  return fill_single(out, [&](int64_t room) -> int64_t {
    const int64_t take = sentence_end_after(*current_, consumed_) - consumed_;
    if (take <= room) return take;
    // The sentence starts the next sequence; one longer than a whole sequence is cut.
    return body_.empty() ? room : -1;
  });
}

Packer::Packed Packer::pack_sentence_pair(PackedSequence& out) {
  if (!ensure_current()) return Packed::end;
  const auto capacity = options_.seq_len - 3;
  const TokenizedDocument& doc = *current_;
  const auto n = static_cast<int64_t>(doc.ids.size());
  // The span: whole sentences from consumed_ while they fit, the first cut if it alone does not.
  span_ends_.clear();
  for (int64_t end = consumed_; end < n;) {
    const int64_t next = sentence_end_after(doc, end);
    if (next - consumed_ > capacity) {
      if (span_ends_.empty()) span_ends_.push_back(consumed_ + capacity);
      break;
    }
    span_ends_.push_back(next);
    end = next;
  }
  const int64_t span_end = span_ends_.back();
  SeededRandom rng(mix_seed({options_.seed, 0x5E7Eull, static_cast<uint64_t>(doc.epoch),
                             static_cast<uint64_t>(doc.start.doc_index),
                             static_cast<uint64_t>(consumed_)}));
  // A ends after a uniform 1..k-1 of the span's k sentences. A lone sentence is B to the
  // sentence before it (read again), or else cut inside.
  int64_t a_begin = consumed_, a_end = span_end;
  const int64_t previous = span_ends_.size() == 1 ? previous_sentence_start(doc, consumed_, span_end, capacity) : -1;
  if (span_ends_.size() >= 2) {
    a_end = span_ends_[rng.below(span_ends_.size() - 1)];
  } else if (previous >= 0) {
    a_begin = previous;
    a_end = consumed_;
  } else if (span_end - consumed_ >= 2) {
    a_end = consumed_ + 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(span_end - consumed_ - 1)));
  }
  const int32_t* ids = doc.ids.data();
  const int32_t* a = ids + a_begin;
  const int32_t* b = ids + a_end;
  int64_t a_len = a_end - a_begin, b_len = span_end - a_end, used = span_end - consumed_;
  int8_t label = 0;
  if (options_.objective == config::Objective::nsp) {
    // A lone token has no B of its own: it is always paired with a random one.
    if (b_len == 0 || rng.coin()) {
      if (const TokenizedDocument* other = random_other_document(rng)) {
        if (previous >= 0) {  // A is the lone sentence itself, not the one read again
          a = ids + consumed_;
          a_len = span_end - consumed_;
        } else {
          used = a_len;  // the real B stays in the stream for the next pair
        }
        const Range r = sentences_from_random_start(*other, capacity - a_len, rng);
        label = 1;
        b = other->ids.data() + r.begin;
        b_len = r.end - r.begin;
      }
    }
  } else if (b_len > 0 && rng.coin()) {
    label = 1;
    std::swap(a, b);
    std::swap(a_len, b_len);
  }
  if (b_len == 0) {  // a lone token without a partner is dropped
    advance(used);
    return Packed::nothing;
  }
  emit_pair(out, a, a_len, b, b_len, label);
  advance(used);
  return Packed::sequence;
}

}  // namespace mlm::data

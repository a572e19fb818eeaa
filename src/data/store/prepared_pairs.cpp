// PreparedSplit's NSP / SOP sequences: a table span cut into A and B when it is read, by the
// streaming packer's rules (stream/packer.h), with the negatives drawn from the whole split.
#include <stdexcept>

#include "mlm/data/store/prepared_split.h"
#include "mlm/data/seeded_random.h"
#include "mlm/util/errors.h"

namespace mlm::data {
namespace prepared_pairs_detail {

struct Range {
  int64_t begin = 0, end = 0;
};

/// Whole sentences of document `d` from a uniform sentence on, while they fit in `room` (>= 1)
/// tokens; the first one cut to `room` when it alone is longer (sentences_from_random_start of
/// sentence_packing.cpp, over the index).
Range sentences_from_random_start(const StoreShard& shard, int64_t d, int64_t room, SeededRandom& rng) {
  const int64_t first_sentence = shard.doc_first_sentence(d);
  const int64_t end_sentence = shard.doc_first_sentence(d + 1);
  if (end_sentence <= first_sentence) {
    throw DataError(shard.path() + ": index: document " + std::to_string(d) + " has no sentence");
  }
  const int64_t first = first_sentence + static_cast<int64_t>(rng.below(static_cast<uint64_t>(end_sentence - first_sentence)));
  Range r;
  r.begin = first == 0 ? 0 : shard.sentence_end(first - 1);
  r.end = r.begin;
  for (int64_t k = first; k < end_sentence; ++k) {
    const int64_t end = shard.sentence_end(k);
    if (end - r.begin > room) break;
    r.end = end;
  }
  if (r.end == r.begin) r.end = r.begin + room;
  return r;
}

}  // namespace prepared_pairs_detail

using prepared_pairs_detail::Range;

// When the span is one whole sentence, not its document's first, and fits with the sentence
// before it: where that sentence starts. Else -1.
int64_t PreparedSplit::previous_sentence_start(const TableEntry& e) const {
  const StoreShard& shard = store_->shard(e.shard);
  const int64_t s = e.first_sentence;
  const int64_t doc_first = shard.doc_first_sentence(e.document);
  if (s == doc_first || shard.sentence_end(s - 1) != e.begin || shard.sentence_end(s) != e.end) return -1;
  const int64_t start = s - 1 == 0 ? 0 : shard.sentence_end(s - 2);
  return e.end - start <= settings_.seq_len - 3 ? start : -1;
}

void PreparedSplit::read_sentence_pair(const TableEntry& e, uint64_t sample_id, PackedSequence& out) const {
  const StoreShard& shard = store_->shard(e.shard);
  const int64_t capacity = settings_.seq_len - 3;
  // The span's sentence ends: whole sentences, or the first one cut at e.end.
  std::vector<int64_t> span_ends;
  for (int64_t s = e.first_sentence;; ++s) {
    const int64_t end = shard.sentence_end(s);
    span_ends.push_back(std::min(end, e.end));
    if (end >= e.end) break;
  }
  SeededRandom rng(mix_seed({seed_, 0x5E7Eull, sample_id}));
  const int64_t previous = span_ends.size() == 1 ? previous_sentence_start(e) : -1;
  int64_t a_begin = e.begin, a_end = e.end;
  if (span_ends.size() >= 2) {
    a_end = span_ends[rng.below(span_ends.size() - 1)];
  } else if (previous >= 0) {
    a_begin = previous;
    a_end = e.begin;
  } else if (e.end - e.begin >= 2) {
    a_end = e.begin + 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(e.end - e.begin - 1)));
  }
  std::vector<int32_t> tokens;  // [a_begin, e.end) of the shard
  shard.read_tokens(a_begin, e.end, tokens);
  const int32_t* a = tokens.data();
  const int32_t* b = tokens.data() + (a_end - a_begin);
  int64_t a_len = a_end - a_begin, b_len = e.end - a_end;
  int8_t label = 0;
  std::vector<int32_t> negative;
  if (settings_.objective == config::Objective::nsp) {
    // A lone token has no B of its own: it is always paired with a random one.
    if (b_len == 0 || rng.coin()) {
      if (previous >= 0) {  // A is the lone sentence itself, not the one read again
        a = tokens.data() + (e.begin - a_begin);
        a_len = e.end - e.begin;
      }
      const Document other = random_document(e, rng);
      const StoreShard& other_shard = store_->shard(other.shard);
      const Range r = prepared_pairs_detail::sentences_from_random_start(other_shard, other.index, capacity - a_len, rng);
      other_shard.read_tokens(r.begin, r.end, negative);
      label = 1;
      b = negative.data();
      b_len = r.end - r.begin;
    }
  } else if (b_len > 0 && rng.coin()) {
    label = 1;
    std::swap(a, b);
    std::swap(a_len, b_len);
  }
  if (b_len == 0) {
    throw std::logic_error("prepared split: a span without a B passed the table (SOP lone token)");
  }
  emit_pair(out, a, a_len, b, b_len, label);
}

void PreparedSplit::read_token_pair(const TableEntry& e, uint64_t sample_id, PackedSequence& out) const {
  const StoreShard& shard = store_->shard(e.shard);
  const int64_t capacity = settings_.seq_len - 3;
  const int64_t length = e.end - e.begin;
  SeededRandom rng(mix_seed({seed_, 0x9A1Bull, sample_id}));
  std::vector<int32_t> tokens, negative;
  shard.read_tokens(e.begin, e.end, tokens);
  const bool nsp = settings_.objective == config::Objective::nsp;
  const int32_t* a = tokens.data();
  const int32_t* b = nullptr;
  int64_t a_len = length, b_len = 0;
  int8_t label = 0;
  bool draw_negative = false;
  if (length < 2) {
    draw_negative = true;  // only NSP keeps a lone token (the table drops it for SOP)
  } else {
    a_len = 1 + static_cast<int64_t>(rng.below(static_cast<uint64_t>(length - 1)));
    b = a + a_len;
    b_len = length - a_len;
    if (nsp) {
      draw_negative = rng.coin();
    } else if (rng.coin()) {
      label = 1;
      std::swap(a, b);
      std::swap(a_len, b_len);
    }
  }
  if (draw_negative) {
    const Document other = random_document(e, rng);
    const StoreShard& other_shard = store_->shard(other.shard);
    const int64_t begin = other_shard.doc_begin(other.index), end = other_shard.doc_end(other.index);
    b_len = std::min(capacity - a_len, end - begin);
    const int64_t at = begin + static_cast<int64_t>(rng.below(static_cast<uint64_t>(end - begin - b_len + 1)));
    other_shard.read_tokens(at, at + b_len, negative);
    b = negative.data();
    label = 1;
  }
  if (b_len == 0) {
    throw std::logic_error("prepared split: a token span without a B passed the table (SOP lone token)");
  }
  emit_pair(out, a, a_len, b, b_len, label);
}

}  // namespace mlm::data

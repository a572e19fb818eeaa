#include "mlm/data/store/sequence_table.h"

#include <algorithm>
#include <string>

#include "mlm/util/errors.h"

namespace mlm::data {
namespace sequence_table_detail {

/// Walks a shard's sentences in order, reading each index entry once, and knows the
/// document each sentence belongs to. Checks the order of what it reads, since a damaged
/// index would otherwise loop or cut out of range.
class SentenceWalk {
 public:
  explicit SentenceWalk(const StoreShard& shard) : shard_(shard) {
    if (shard.sentences() > 0) end_ = read_end(0);
    next_doc_first_ = shard.documents() > 0 ? read_doc_first(1) : 0;
    skip_empty_documents();
  }

  bool done() const { return sentence_ >= shard_.sentences(); }
  int64_t sentence() const { return sentence_; }
  int64_t document() const { return document_; }
  int64_t document_begin() const { return document_begin_; }
  /// The current sentence: [start(), end()); previous_start() is the start of the sentence
  /// before it in the same document, -1 when it is the document's first.
  int64_t start() const { return start_; }
  int64_t end() const { return end_; }
  int64_t previous_start() const { return previous_start_; }
  bool last_of_document() const { return sentence_ + 1 == next_doc_first_; }

  /// Moves past the current sentence; true when that ended its document.
  bool advance() {
    const bool document_done = last_of_document();
    previous_start_ = document_done ? -1 : start_;
    start_ = end_;
    ++sentence_;
    if (!done()) {
      const int64_t next = read_end(sentence_);
      if (next <= end_) {
        throw DataError(shard_.path() + ": index: sentence " + std::to_string(sentence_) +
                        " ends at " + std::to_string(next) + ", not after the previous end " +
                        std::to_string(end_) + "; prepare the store again");
      }
      end_ = next;
    }
    if (document_done) {
      ++document_;
      document_begin_ = start_;
      if (document_ < shard_.documents()) next_doc_first_ = read_doc_first(document_ + 1);
      skip_empty_documents();
    }
    return document_done;
  }

 private:
  int64_t read_end(int64_t s) const { return shard_.sentence_end(s); }
  int64_t read_doc_first(int64_t d) const {
    const int64_t first = shard_.doc_first_sentence(d);
    if (first < sentence_ || first > shard_.sentences()) {
      throw DataError(shard_.path() + ": index: document " + std::to_string(d) +
                      " starts at sentence " + std::to_string(first) + ", out of order; prepare the store again");
    }
    return first;
  }
  // The format has no empty documents; a writer that let one through must not shift the rest.
  void skip_empty_documents() {
    while (document_ < shard_.documents() && next_doc_first_ == sentence_) {
      ++document_;
      if (document_ < shard_.documents()) next_doc_first_ = read_doc_first(document_ + 1);
    }
  }

  const StoreShard& shard_;
  int64_t sentence_ = 0, document_ = 0, next_doc_first_ = 0;
  int64_t start_ = 0, end_ = 0, previous_start_ = -1, document_begin_ = 0;
};

}  // namespace sequence_table_detail

using sequence_table_detail::SentenceWalk;

SequenceTable::SequenceTable(const PreparedStore& store, const TableSettings& settings)
    : settings_(settings), keep_documents_(settings.cross_documents || settings.pairs()) {
  if (settings.seq_len < (settings.pairs() ? 5 : 3)) {
    throw ConfigError("data.seq_len (" + std::to_string(settings.seq_len) + ") is too short to pack", "data.seq_len");
  }
  // A first guess of the size (sequences are rarely much shorter than full), to grow once.
  const int64_t guess = store.tokens() / std::max<int64_t>(1, settings.seq_len - 3) + 16;
  begin_.reserve(static_cast<size_t>(guess + guess / 4));
  if (keep_documents_) document_.reserve(begin_.capacity());
  if (settings.pairs()) end_.reserve(begin_.capacity());
  if (settings.pairs() && settings.packing == config::Packing::sentences) first_sentence_.reserve(begin_.capacity());
  shard_first_.push_back(0);
  for (size_t i = 0; i < store.shard_count(); ++i) {
    const StoreShard& shard = store.shard(i);
    shard.check_index();  // the table is built from all of it: its checksum and order first
    if (shard.tokens() > static_cast<int64_t>(UINT32_MAX) || shard.sentences() > static_cast<int64_t>(UINT32_MAX) ||
        shard.documents() >= static_cast<int64_t>(kJoins)) {
      throw DataError(shard.path() + ": " + std::to_string(shard.tokens()) + " tokens, " +
                      std::to_string(shard.sentences()) + " sentences, " + std::to_string(shard.documents()) +
                      " documents: more than a shard may hold (2^32 - 1 tokens, 2^31 - 1 documents)");
    }
    const bool sentences = settings.packing == config::Packing::sentences;
    if (shard.tokens() > 0) {
      if (settings.pairs()) {
        sentences ? span_sentences(shard) : span_tokens(shard);
      } else {
        sentences ? pack_sentences(shard) : pack_tokens(shard);
      }
    }
    shard_first_.push_back(size());
    shard_tokens_.push_back(shard.tokens());
  }
  begin_.shrink_to_fit();
  document_.shrink_to_fit();
  end_.shrink_to_fit();
  first_sentence_.shrink_to_fit();
}

void SequenceTable::add(int64_t begin, int64_t document, int64_t end, int64_t first_sentence) {
  begin_.push_back(static_cast<uint32_t>(begin));
  if (keep_documents_) document_.push_back(static_cast<uint32_t>(document));
  if (settings_.pairs()) end_.push_back(static_cast<uint32_t>(end));
  if (first_sentence >= 0) first_sentence_.push_back(static_cast<uint32_t>(first_sentence));
}

void SequenceTable::mark_joins_documents() { document_.back() |= kJoins; }

TableEntry SequenceTable::entry(int64_t index) const {
  TableEntry e;
  const auto it = std::upper_bound(shard_first_.begin(), shard_first_.end(), index);
  e.shard = static_cast<size_t>(it - shard_first_.begin() - 1);
  e.begin = begin_[static_cast<size_t>(index)];
  if (settings_.pairs()) {
    e.end = end_[static_cast<size_t>(index)];
  } else {
    e.end = index + 1 < shard_first_[e.shard + 1] ? begin_[static_cast<size_t>(index + 1)] : shard_tokens_[e.shard];
  }
  if (keep_documents_) {
    const uint32_t d = document_[static_cast<size_t>(index)];
    e.document = d & ~kJoins;
    e.joins_documents = (d & kJoins) != 0;
  }
  if (!first_sentence_.empty()) e.first_sentence = first_sentence_[static_cast<size_t>(index)];
  return e;
}

int64_t SequenceTable::memory_bytes() const {
  return static_cast<int64_t>(4 * (begin_.capacity() + document_.capacity() + end_.capacity() +
                                   first_sentence_.capacity()) +
                              8 * (shard_first_.capacity() + shard_tokens_.capacity()));
}

// mlm, sentences: pack_sentences in sentence_packing.cpp, over the index.
void SequenceTable::pack_sentences(const StoreShard& shard) {
  const int64_t capacity = settings_.seq_len - 2;
  SentenceWalk walk(shard);
  int64_t pos = 0;
  while (!walk.done()) {
    add(pos, walk.document(), 0);
    int64_t body = 0;
    while (body < capacity && !walk.done()) {
      const bool joins = body > 0 && pos == walk.document_begin();  // after a [SEP]
      const int64_t room = capacity - body - (joins ? 1 : 0);
      int64_t take = walk.end() - pos;
      if (take > room) {
        if (body > 0) break;  // the sentence starts the next sequence
        take = room;          // a sentence longer than a whole sequence is cut
      }
      if (joins) mark_joins_documents();
      body += take + (joins ? 1 : 0);
      pos += take;
      const bool document_done = pos == walk.end() && walk.advance();
      if (document_done && !settings_.cross_documents) break;
    }
  }
}

// mlm, tokens: pack_token_chunk in packer.cpp; only document boundaries matter.
void SequenceTable::pack_tokens(const StoreShard& shard) {
  const int64_t capacity = settings_.seq_len - 2;
  const int64_t documents = shard.documents();
  int64_t d = 0, pos = 0;
  auto document_end = [&](int64_t doc) {
    const int64_t next_first = shard.doc_first_sentence(doc + 1);
    return next_first == 0 ? 0 : shard.sentence_end(next_first - 1);
  };
  int64_t doc_begin = 0, doc_end = documents > 0 ? document_end(0) : 0;
  auto next_document = [&] {
    ++d;
    doc_begin = doc_end;
    if (d < documents) {
      doc_end = document_end(d);
      if (doc_end < doc_begin) throw DataError(shard.path() + ": index: document " + std::to_string(d) + " ends before it starts");
    }
  };
  while (d < documents && doc_end == doc_begin) next_document();
  while (pos < shard.tokens() && d < documents) {
    add(pos, d, 0);
    int64_t body = 0;
    while (body < capacity && d < documents) {
      if (body > 0 && pos == doc_begin) {
        // A new document joins after a [SEP]; not when only the [SEP] would fit.
        if (capacity - body < 2) break;
        body += 1;
        mark_joins_documents();
      }
      const int64_t take = std::min(capacity - body, doc_end - pos);
      body += take;
      pos += take;
      const bool document_done = pos == doc_end;
      if (document_done) {
        next_document();
        while (d < documents && doc_end == doc_begin) next_document();
      }
      if (document_done && !settings_.cross_documents) break;
    }
  }
}

// nsp / sop, sentences: the spans of pack_sentence_pair in sentence_packing.cpp.
void SequenceTable::span_sentences(const StoreShard& shard) {
  const int64_t capacity = settings_.seq_len - 3;
  const bool sop = settings_.objective == config::Objective::sop;
  SentenceWalk walk(shard);
  int64_t pos = 0;
  while (!walk.done()) {
    const int64_t begin = pos, document = walk.document(), first_sentence = walk.sentence();
    const bool at_sentence_start = pos == walk.start();
    const int64_t previous = walk.previous_start();
    int64_t count = 0;
    bool cut = false;
    for (;;) {
      if (walk.end() - begin > capacity) {
        if (count == 0) {
          pos = begin + capacity;
          cut = true;
        }
        break;
      }
      pos = walk.end();
      ++count;
      if (walk.advance() || walk.done()) break;  // a span stays in its document
    }
    // SOP drops a lone token that has no sentence before it to pair with (NSP pairs it with
    // a random one); pairing needs the span to be one whole sentence that fits beside it.
    const bool partner = count == 1 && !cut && at_sentence_start && previous >= 0 && pos - previous <= capacity;
    if (sop && pos - begin < 2 && !partner) continue;
    add(begin, document, pos, first_sentence);
  }
}

// nsp / sop, tokens: the chunks of pack_token_pair in packer.cpp.
void SequenceTable::span_tokens(const StoreShard& shard) {
  const int64_t capacity = settings_.seq_len - 3;
  const bool sop = settings_.objective == config::Objective::sop;
  int64_t doc_begin = 0;
  for (int64_t d = 0; d < shard.documents(); ++d) {
    const int64_t next_first = shard.doc_first_sentence(d + 1);
    const int64_t doc_end = next_first == 0 ? 0 : shard.sentence_end(next_first - 1);
    if (doc_end < doc_begin) throw DataError(shard.path() + ": index: document " + std::to_string(d) + " ends before it starts");
    for (int64_t p = doc_begin; p < doc_end; p += capacity) {
      const int64_t end = std::min(p + capacity, doc_end);
      if (sop && end - p < 2) continue;  // a lone token: no pair (NSP pairs it with a random B)
      add(p, d, end);
    }
    doc_begin = doc_end;
  }
}

}  // namespace mlm::data

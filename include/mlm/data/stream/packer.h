#pragma once
// Packs the token stream into sequences of at most seq_len ids, in one of two ways
// (data.packing). A sentence is a line of a document (text/sentence_split.h).
//
// sentences (the default; BERT's and RoBERTa's FULL-SENTENCES way):
//  mlm: [CLS] s1 s2 ... [SEP], whole sentences while they fit. With cross_documents the
//      next document follows after a [SEP] (RoBERTa FULL-SENTENCES), else a document's last
//      sequence ends with it. A sequence ends before the first sentence that does not fit,
//      so it ends at a sentence end; only a single sentence longer than the sequence is cut
//      (its rest starts the next sequence).
//  nsp / sop: a span is the whole sentences of one document that fit in seq_len-3 tokens
//      (the first one cut when it alone is longer). With k >= 2 sentences, A is the first j
//      (j uniform in 1..k-1) and B the rest, as BERT's create_pretraining_data.py cuts its
//      chunks. SOP swaps A and B half the time (label 1 = swapped, as ALBERT). NSP replaces
//      B half the time (label 1 = random) by whole sentences, from a random sentence on, of a
//      document drawn uniformly from the next kNegativeWindow documents of the stream (a
//      stream cannot draw from the whole corpus as BERT's in-memory lists do), and the real B
//      stays for the next sequence, so no text is lost. A span of one sentence (a document's
//      last, or the one an NSP negative left) becomes B to the sentence before it in its
//      document, read a second time (an NSP negative keeps the lone sentence as A). Only a
//      sentence with no such partner (a one-line document, a sentence too long to share a
//      sequence) is cut inside at a uniform token, as in tokens packing; without that a
//      corpus of one-line documents would give no SOP pairs and only NSP negatives.
//
// tokens (the packing before sentences existed, reproduced exactly):
//  mlm: [CLS] d1 ... [SEP] d2 ... [SEP], cut wherever the sequence is full (cross_documents)
//      or at a document's end (a document's tail is a short sequence, padded later);
//  nsp / sop: [CLS] A [SEP] B [SEP] cut from up to seq_len-3 tokens of one document at a
//      uniform token. SOP swaps as above; NSP takes B half the time from the next document
//      of the stream at a random offset, and puts the real B back.
//
// A sequence records where each joined document starts (PackedSequence::document_starts).
//
// Every random choice is seeded by the sequence's start position, and the negatives' window
// is what follows that position in the stream, so a packer restarted from position() packs
// exactly the same sequences: a document and a token offset in it are the whole state.
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/data/stream/tokenizing_pipeline.h"
#include "mlm/text/vocab_info.h"

namespace mlm::data {

class SeededRandom;

/// Sentence packing draws an NSP negative from this many documents after the current one.
inline constexpr size_t kNegativeWindow = 16;

/// Where the next sequence starts: the stream cursor of a document and the tokens of it
/// already packed.
struct PackPosition {
  int64_t epoch = 0;
  StreamCursor cursor;
  int64_t token_offset = 0;
};

struct PackerOptions {
  int64_t seq_len = 128;
  bool cross_documents = true;
  config::Packing packing = config::Packing::sentences;
  config::Objective objective = config::Objective::mlm;
  uint64_t seed = 0;
  text::SpecialIds ids;
};

class Packer {
 public:
  /// `source` must start reading at `start` (epoch and cursor); its first document is
  /// entered at start.token_offset. Sentence packing needs a source that keeps sentences.
  Packer(PackerOptions options, TokenizingPipeline& source, PackPosition start);

  /// document: `out` holds the next sequence (sample_id untouched); end_of_epoch: the epoch
  /// is over (the next call continues with the next one); end_of_stream: nothing more.
  StreamEvent next(PackedSequence& out);

  /// Where the next sequence starts.
  PackPosition position() const;

 private:
  enum class Packed { sequence, nothing, end };
  Packed pack_token_chunk(PackedSequence& out);
  Packed pack_token_pair(PackedSequence& out);
  Packed pack_sentences(PackedSequence& out);
  Packed pack_sentence_pair(PackedSequence& out);
  /// The fill loop of both single-sequence packings: takes from the current document and
  /// the ones after it (each joining after a [SEP]) until the sequence is full, then emits it.
  /// `next_take(room)` says how many tokens of the current document to take when `room`
  /// tokens are left after any [SEP]; negative: the sequence ends before it.
  Packed fill_single(PackedSequence& out, const std::function<int64_t(int64_t room)>& next_take);
  void emit_single(PackedSequence& out) const;
  void emit_pair(PackedSequence& out, const int32_t* a, int64_t a_len, const int32_t* b,
                 int64_t b_len, int8_t label) const;

  bool fetch(TokenizedDocument& doc);
  bool ensure_current();
  /// The next `count` non-empty documents of the epoch are read ahead (fewer at its end).
  void read_ahead(size_t count);
  const TokenizedDocument* peek_ahead();
  /// NSP negative: one of the next kNegativeWindow documents, uniformly; null at an epoch end.
  const TokenizedDocument* random_other_document(SeededRandom& rng);
  void finish_current();
  void advance(int64_t tokens);

  PackerOptions options_;
  TokenizingPipeline& source_;
  std::optional<TokenizedDocument> current_;
  int64_t consumed_ = 0;                    // tokens of current_ already packed
  std::deque<TokenizedDocument> ahead_;     // NSP: the next documents, read early
  std::optional<StreamEvent> pending_;      // an epoch/stream end met while reading ahead
  int64_t first_skip_;                      // start.token_offset, for the first document only
  bool first_ = true;
  int64_t epoch_;
  PackPosition after_;                      // position when no document is current
  std::vector<int32_t> body_;
  std::vector<int32_t> body_document_starts_;  // offsets in body_ where a joined document starts
  std::vector<int64_t> span_ends_;          // sentence ends of a pair's span
};

}  // namespace mlm::data

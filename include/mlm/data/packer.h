#pragma once
// Packs the token stream into sequences of at most seq_len ids.
//  mlm, cross_documents: [CLS] d1 ... [SEP] d2 ... [SEP]  (RoBERTa FULL-SENTENCES: documents
//      follow each other with [SEP] between them; a sequence ends where it is full);
//  mlm, !cross_documents: [CLS] part of one document [SEP] (a document's tail is a short
//      sequence, padded later);
//  nsp / sop: [CLS] A [SEP] B [SEP] cut from up to seq_len-3 tokens of one document at a
//      seeded random point. SOP swaps A and B half the time (label 1 = swapped). NSP takes B
//      half the time from the next document of the stream instead (label 1 = random), at a
//      random offset, and puts the real B back so no text is lost (as BERT does).
// Every random choice is seeded by the sequence's start position, so a packer restarted
// from position() packs exactly the same sequences.
#include <cstdint>
#include <optional>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/data/tokenizing_pipeline.h"
#include "mlm/text/vocab_info.h"

namespace mlm::data {

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
  config::Objective objective = config::Objective::mlm;
  uint64_t seed = 0;
  text::SpecialIds ids;
};

class Packer {
 public:
  /// `source` must start reading at `start` (epoch and cursor); its first document is
  /// entered at start.token_offset.
  Packer(PackerOptions options, TokenizingPipeline& source, PackPosition start);

  /// document: `out` holds the next sequence (sample_id untouched); end_of_epoch: the epoch
  /// is over (the next call continues with the next one); end_of_stream: nothing more.
  StreamEvent next(PackedSequence& out);

  /// Where the next sequence starts.
  PackPosition position() const;

 private:
  enum class Packed { sequence, nothing, end };
  Packed pack_full_sentences(PackedSequence& out);
  Packed pack_pair(PackedSequence& out);
  bool fetch(TokenizedDocument& doc);
  bool ensure_current();
  const TokenizedDocument* peek_ahead();
  void finish_current();

  PackerOptions options_;
  TokenizingPipeline& source_;
  std::optional<TokenizedDocument> current_;
  int64_t consumed_ = 0;                 // tokens of current_ already packed
  std::optional<TokenizedDocument> ahead_;  // NSP: the next document, read early
  std::optional<StreamEvent> pending_;   // an epoch/stream end met while reading ahead
  int64_t first_skip_;                   // start.token_offset, for the first document only
  bool first_ = true;
  int64_t epoch_;
  PackPosition after_;                   // position when no document is current
  std::vector<int32_t> body_;
};

}  // namespace mlm::data

#pragma once
// A split's packed sequences for one data-parallel rank, whatever they come from: the
// streaming text path (stream/streaming_dataset.h), a prepared token store
// (store/prepared_dataset.h) or a weighted mixture of sources (mixture/mixture_source.h);
// open_sequences.h picks the one a configuration names. The trainer, the evaluator, mlm-bench
// --data and mlm-data draw through this interface only, and a checkpoint stores each rank's
// resume_state() as it is.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>

#include "mlm/data/packed_sequence.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

enum class Split { train, valid };

struct DataCounters {
  int64_t sequences = 0;           // returned by next()
  int64_t tokens = 0;              // ids in the returned sequences (specials included)
  int64_t documents = 0;           // documents tokenized (streaming: read-ahead included)
  int64_t bad_records = 0;         // skipped (data.on_bad_record: skip)
  int64_t invalid_utf8_fixes = 0;  // invalid UTF-8 sequences replaced
  int64_t bytes_read = 0;          // prepared stores: token and index bytes copied out
};

class SequenceSource {
 public:
  virtual ~SequenceSource() = default;

  /// The next sequence of this rank. Train: never ends (epoch after epoch). Valid: false
  /// after one pass.
  virtual bool next(PackedSequence& out) = 0;

  /// A small JSON value; open_sequences(..., resume = it) yields exactly the sequences that
  /// would come next here. It names its kind, rank and world size, so a position of another
  /// source, rank or world size is refused with a clear error.
  virtual nlohmann::json resume_state() const = 0;

  /// Passes over the split so far (a mixture: over its first source).
  virtual int64_t epoch() const = 0;
  virtual DataCounters counters() const = 0;
};

/// A split's whole global stream (every rank's sequences) by index: what a weighted mixture
/// draws from (mixture/mixture_source.h). The streaming path reads its stream in order and skips
/// what is not asked for; a prepared store reads the asked sequence only.
class IndexedSequences {
 public:
  virtual ~IndexedSequences() = default;
  /// The sequence at index g of the split's global stream (epochs back to back), with
  /// sample_id = g. Calls come with strictly increasing g. Valid: false past the one pass.
  virtual bool at(int64_t g, PackedSequence& out) = 0;
  /// Reopening with this continues after the last g asked for.
  virtual nlohmann::json resume_state() const = 0;
  virtual int64_t epoch() const = 0;
  virtual DataCounters counters() const = 0;
};

}  // namespace mlm::data

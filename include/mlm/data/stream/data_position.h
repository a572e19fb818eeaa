#pragma once
// Where a rank's data stream stands: a small value the checkpoint stores. A dataset built
// from it yields exactly the sequences the saved one would have yielded next; it re-reads
// only the current shuffle chunk, never what came before it. Every rank reads the same
// global stream, so the fields describe that stream; a rank's position sits just after the
// last global sequence it returned.
#include <nlohmann/json.hpp>

#include <cstdint>

namespace mlm::data {

struct DataPosition {
  int64_t epoch = 0;          // passes over the split so far
  // The shuffle chunk being returned starts here:
  int64_t file_index = 0;     // index in the epoch's (seeded) file order
  int64_t byte_offset = 0;    // where reading resumes in that file: an uncompressed byte
                              // offset, or for a table (Parquet, Arrow, CSV) a row
  int64_t line = 1;           // the line (table: 1-based row) there, for messages
  int64_t doc_index = 0;      // documents of the split before that offset in this epoch
  int64_t token_offset = 0;   // tokens of the first document read there already packed
  int64_t chunk_index = 0;    // shuffle chunk number in the epoch (seeds its permutation)
  int64_t chunk_emitted = 0;  // sequences of that chunk already passed (all ranks')
  int64_t samples = 0;        // global sequences (all ranks') before this point since the
                              // start: the sample_id of the next one the stream looks at
  int64_t rank = 0;           // the stream this position belongs to
  int64_t world_size = 1;
  uint64_t corpus = 0;        // fingerprint of the split's file list
  bool step_boundary = false; // every rank's share before `samples` is done: where the ranks
                              // of a run resumed on another world size continue from
                              // (reshard_position); absent from positions of one rank

  nlohmann::json to_json() const;
  /// DataError naming the missing or mistyped key.
  static DataPosition from_json(const nlohmann::json& json);

  bool operator==(const DataPosition& o) const;
  bool operator!=(const DataPosition& o) const { return !(*this == o); }
};

}  // namespace mlm::data

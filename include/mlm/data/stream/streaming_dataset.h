#pragma once
// The packed sequences of one split for one data-parallel rank, streamed from the corpus
// files: tokenized ahead of the trainer on background threads, shuffled in seeded chunks,
// resumable from a DataPosition. See docs/ARCHITECTURE.md.
//
// One global stream: per epoch the files come in a seeded random order (data.shuffle_files),
// documents in file order, packed into sequences; the sequences are shuffled in chunks of
// data.shuffle_buffer (a chunk is filled, permuted with a seed of (train.seed, epoch, chunk)
// and returned) and numbered g = 0, 1, 2, ... across epochs. None of this depends on the
// rank: every rank builds the same global stream.
//
// Sharding is by sequence: rank r of N keeps the global sequences with g % N == r, and g is
// the sequence's sample_id (the masking seed). So N ranks with micro-batch B see in step k
// exactly the sequences {kNB, ..., kNB + NB - 1}, with the same masks, that one process with
// micro-batch N·B sees; with the loss normalised by the global masked count, both runs take
// the same optimizer steps. The price: every rank reads and tokenizes the whole corpus, not
// 1/N of it. Tokenization runs at ~1M tokens/s per worker thread, two orders of magnitude
// above the ~10k tokens/s a rank trains on, so the extra work hides in the read-ahead; exact
// N x B == 1 x N·B equivalence (and a data order that does not change with the world size)
// is worth it. Sharding documents instead gives each rank other sequences than the single
// process has, so no data-parallel run could be checked against a single-process one.
//
// A position names the chunk's start, how many of its sequences (all ranks') were passed and
// the global counter, so resuming re-reads only that chunk. The valid split is one pass in a
// fixed order, no shuffling, the same every time, sharded the same way: the ranks together
// evaluate the whole set once (a rank may get nothing when there are fewer sequences than
// ranks).
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/stream/data_position.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/data/stream/packer.h"
#include "mlm/data/sequence_source.h"
#include "mlm/data/stream/tokenizing_pipeline.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

class StreamingDataset : public SequenceSource {
 public:
  /// The plan's rank's sequences. Checks the corpus first (DataError naming a missing,
  /// unreadable or binary file, a glob matching nothing, an empty list). `resume` must come
  /// from position() of a dataset of the same split, rank and world size over the same files
  /// (ConfigError for another rank or world size, DataError for other files or a counter
  /// that is not this rank's).
  StreamingDataset(const config::DataPlan& plan, const text::Tokenizer& tokenizer, Split split,
                   std::optional<DataPosition> resume = std::nullopt);
  ~StreamingDataset() override;
  StreamingDataset(const StreamingDataset&) = delete;
  StreamingDataset& operator=(const StreamingDataset&) = delete;

  /// The next sequence. Train: never ends (epoch after epoch). Valid: false after one pass.
  /// DataError when an epoch packs into no sequence at all (empty corpus).
  bool next(PackedSequence& out) override;

  /// Rebuilding from this yields exactly the sequences that would come next.
  DataPosition position() const { return position_; }
  nlohmann::json resume_state() const override;
  int64_t epoch() const override { return position_.epoch; }
  DataCounters counters() const override;

 private:
  struct Output {
    PackedSequence sequence;
    DataPosition after;
    bool end = false;
    std::exception_ptr error;
  };

  /// ConfigError or DataError (as the constructor says) for a `resume` of another rank,
  /// world size or corpus, or a position that is not this rank's.
  void check_resume(const DataPosition& resume, size_t file_count) const;
  /// The tokenizing pipeline and the packer, from position_ on.
  void start_pipeline(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                      StreamOptions stream);
  bool produce(Output& out);
  void fill_chunk();
  DataPosition make_position(const PackPosition& start, int64_t chunk_index, int64_t emitted) const;
  void producer_loop();

  Split split_;
  int rank_, world_size_;
  uint64_t seed_;
  uint64_t corpus_;
  std::string corpus_names_;  // the files, for errors ("a.txt, b.txt and 3 more")
  int64_t shuffle_chunk_;
  size_t prefetch_;
  DataPosition position_;
  int64_t tokens_ = 0;

  std::unique_ptr<TokenizingPipeline> pipeline_;
  std::unique_ptr<Packer> packer_;

  // Chunked shuffle (producer side).
  std::vector<PackedSequence> chunk_;
  std::vector<int64_t> order_;
  size_t chunk_pos_ = 0;
  int64_t skip_ = 0;               // resume: sequences of the first chunk already returned
  int64_t chunk_index_ = 0, next_chunk_index_ = 0;
  PackPosition chunk_start_, next_start_;
  int64_t global_ = 0;             // global index of the next sequence of the chunk
  bool stream_ended_ = false;
  bool epoch_from_start_ = false;  // zero-sequence check: only for whole epochs
  int64_t epoch_sequences_ = 0;

  // Prefetch queue between the producer thread and next() (num_workers > 0).
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Output> queue_;
  bool stop_ = false;
  bool done_ = false;
  std::thread producer_;
};

}  // namespace mlm::data

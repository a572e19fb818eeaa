#pragma once
// The packed sequences of one split of a prepared token store (data.store) for one
// data-parallel rank: read by index from the memory-mapped shards, never tokenized. See
// prepared_store.h for the store, sequence_table.h for the packing, epoch_order.h for the
// order.
//
// One global stream, numbered g = 0, 1, 2, ... across epochs (g is the sample_id, the
// masking seed): position g is sequence order.at(g / M, g % M) of the M in the table.
// train: G = world_size * L sequences make the global batch of one optimizer step, where
//   L = train.micro_batch_size * train.grad_accum_steps (DataPlan::step_sequences) is one
//   rank's share, and rank r takes
//   the contiguous slice [r*L, (r+1)*L) of each (g % G in it), as A micro-batches of B, so
//   that it reads about 1/N of the store (epoch_order.h). The order depends on G alone: N
//   ranks x B x A accumulation see exactly the sequences, sample_ids and masks of one process
//   with N*B x A or N*B*A x 1. Epoch after epoch.
// valid: one pass in table order, no shuffling, g % N == r, as the streaming valid split.
//
// The position is the global counter alone: resume_state() is {"kind": "prepared",
// "samples": one past the last g returned, "rank", "world_size", "global_batch" (train), and
// what identifies the store and the table settings}; reopening from it computes where this
// rank is, in O(1), and refuses another rank, world size, global micro-batch (ConfigError),
// store (DataError) or packing setting (ConfigError naming the key).
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

#include "mlm/config/data_plan.h"
#include "mlm/data/store/epoch_order.h"
#include "mlm/data/store/prepared_split.h"
#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

class PreparedDataset : public SequenceSource {
 public:
  /// The plan's rank's sequences of `split`, from `resume` (null = the start).
  PreparedDataset(const config::DataPlan& plan, const text::Tokenizer& tokenizer, Split split,
                  const nlohmann::json* resume = nullptr);

  bool next(PackedSequence& out) override;
  nlohmann::json resume_state() const override;
  int64_t epoch() const override;
  DataCounters counters() const override;

  const PreparedSplit& prepared() const { return *split_; }
  /// The global index of this rank's k-th sequence (k = 0, 1, ...).
  int64_t global_index(int64_t k) const;

 private:
  /// This rank's sequences with a global index below `samples`.
  int64_t taken_before(int64_t samples) const;

  std::unique_ptr<PreparedSplit> split_;
  std::optional<EpochOrder> order_;  // train only
  int rank_, world_size_;
  int64_t rank_batch_ = 1, global_batch_ = 1;
  int64_t taken_ = 0;    // this rank's sequences returned
  int64_t samples_ = 0;  // one past the last global index returned
  int64_t tokens_ = 0;
};

/// A prepared split's whole global stream by index, for a weighted mixture
/// (sequence_source.h): at(g) reads position g of the order PreparedDataset uses with
/// G = world_size * step_sequences of the plan (train; valid: table order, one pass).
std::unique_ptr<IndexedSequences> open_prepared_indexed(const config::DataPlan& plan,
                                                        const text::Tokenizer& tokenizer, Split split,
                                                        const nlohmann::json* resume = nullptr);

}  // namespace mlm::data

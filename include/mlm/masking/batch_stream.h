#pragma once
// A split's masked batches, drawn the one way the trainer, the evaluator, mlm-bench --data and
// mlm-data all draw them: rows from the split's sequence source (data/sequence_source.h),
// padded and masked by the collator.
// The train split uses the plan's train batch size and seed, the valid split its valid batch
// size and eval seed (config/data_plan.h). Each mask depends only on the seed and the row's
// sample id, so a resumed run masks exactly as the uninterrupted one.
#include <cstdint>
#include <optional>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/sequence_source.h"
#include "mlm/masking/masked_batch.h"
#include "mlm/masking/masking_collator.h"

namespace mlm::masking {

/// Rows per batch of `split`.
int64_t batch_size_for(const config::DataPlan& plan, data::Split split);
/// The masking seed of `split`: the eval seed for the valid split, else the train seed.
uint64_t mask_seed_for(const config::DataPlan& plan, data::Split split);
/// The collator of the plan's batches (its masking settings, seq_len, objective).
MaskingCollator collator_for(const config::DataPlan& plan, const text::VocabInfo& vocab);

class BatchStream {
 public:
  /// The plan's rank's shard of `split`, from `resume` (a position() of the same shard) or
  /// the start.
  BatchStream(const config::DataPlan& plan, const text::Tokenizer& tokenizer, data::Split split,
              const nlohmann::json* resume = nullptr);

  /// The next batch: batch_size() rows, fewer at the end of the valid split; nullopt once the
  /// split has ended (the train split never ends).
  std::optional<MaskedBatch> next();

  /// The sequences of the batch next() returned last (mlm-data shows their text).
  const std::vector<data::PackedSequence>& rows() const { return rows_; }
  int64_t batch_size() const { return batch_size_; }
  /// The masking rate of the batches next() returns from now on (masking.rate_schedule).
  void set_masking_rate(double p) { collator_.set_masking_rate(p); }
  uint64_t seed() const { return seed_; }
  const data::SequenceSource& source() const { return *source_; }

 private:
  std::unique_ptr<data::SequenceSource> source_;
  MaskingCollator collator_;
  int64_t batch_size_;
  uint64_t seed_;
  std::vector<data::PackedSequence> rows_;
};

}  // namespace mlm::masking

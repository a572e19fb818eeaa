#pragma once
// The validation batches of a run, read and tokenized once. This rank's share of the valid
// split (at most its share of eval.max_batches, DataPlan::eval_max_batches) is drawn like
// BatchStream(valid) draws it and kept as packed sequences; every evaluation masks them again
// with eval.seed. A mask depends
// only on the seed and the sample id, so batch i is bit-equal to the i-th batch of
// BatchStream(valid) at every evaluation, and no corpus file is read after the first.
// Memory: the kept sequences, about 5 bytes a token (int32 id, int8 token type); bound a
// large validation split with eval.max_batches.
#include <cstdint>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/masking/masked_batch.h"
#include "mlm/masking/masking_collator.h"
#include "mlm/text/tokenizer.h"

namespace mlm::masking {

class ValidationBatches {
 public:
  /// Reads the plan's rank's shard of the valid split now (ConfigError without validation
  /// data, DataError for a bad corpus, as the dataset throws them).
  ValidationBatches(const config::DataPlan& plan, const text::Tokenizer& tokenizer);

  int64_t size() const { return static_cast<int64_t>(batches_.size()); }
  /// Batch `index` (< size()), masked with eval.seed.
  MaskedBatch batch(int64_t index) const;
  const std::vector<data::PackedSequence>& rows(int64_t index) const { return batches_.at(index); }
  int64_t sequences() const { return sequences_; }
  int64_t tokens() const { return tokens_; }
  int64_t vocab_size() const { return vocab_size_; }
  /// The masks' seed (eval.seed as the plan resolves it), which any other draw an evaluation
  /// makes (objective rtd's sampling) derives from too.
  uint64_t seed() const { return seed_; }

 private:
  MaskingCollator collator_;
  uint64_t seed_;
  int64_t vocab_size_;
  int64_t sequences_ = 0, tokens_ = 0;
  std::vector<std::vector<data::PackedSequence>> batches_;
};

}  // namespace mlm::masking

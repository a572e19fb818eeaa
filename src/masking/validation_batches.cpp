#include "mlm/masking/validation_batches.h"

#include "mlm/data/open_sequences.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/logging.h"

namespace mlm::masking {

ValidationBatches::ValidationBatches(const config::DataPlan& plan, const text::Tokenizer& tokenizer)
    : collator_(collator_for(plan, tokenizer.vocab())),
      seed_(mask_seed_for(plan, data::Split::valid)),
      vocab_size_(tokenizer.vocab().size) {
  const auto start = SteadyClock::now();
  // eval.max_batches bounds the whole evaluation: each rank keeps its share.
  const int64_t all = plan.eval_max_batches, ranks = plan.world_size;
  const int64_t max_batches = all > 0 ? (all + ranks - 1) / ranks : 0;
  const int64_t batch_size = batch_size_for(plan, data::Split::valid);
  const auto source = data::open_sequences(plan, tokenizer, data::Split::valid);
  data::PackedSequence sequence;
  while (max_batches == 0 || size() < max_batches) {
    std::vector<data::PackedSequence> rows;
    while (static_cast<int64_t>(rows.size()) < batch_size && source->next(sequence)) {
      tokens_ += static_cast<int64_t>(sequence.ids.size());
      rows.push_back(std::move(sequence));
    }
    if (rows.empty()) break;
    sequences_ += static_cast<int64_t>(rows.size());
    batches_.push_back(std::move(rows));
  }
  log::info("eval", "validation set: {} batches, {} sequences, {} tokens, read in {:.2f} s",
            size(), sequences_, tokens_, seconds_since(start));
}

MaskedBatch ValidationBatches::batch(int64_t index) const { return collator_(batches_.at(index), seed_); }

}  // namespace mlm::masking

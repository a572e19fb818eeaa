#include "mlm/masking/batch_stream.h"

#include "mlm/data/open_sequences.h"

namespace mlm::masking {

int64_t batch_size_for(const config::DataPlan& plan, data::Split split) {
  return split == data::Split::valid ? plan.valid_batch_size : plan.train_batch_size;
}

uint64_t mask_seed_for(const config::DataPlan& plan, data::Split split) {
  return split == data::Split::valid ? plan.eval_seed : plan.seed;
}

MaskingCollator collator_for(const config::DataPlan& plan, const text::VocabInfo& vocab) {
  return MaskingCollator(plan.masking, vocab, plan.data.seq_len, plan.objective,
                         plan.document_ids);
}

BatchStream::BatchStream(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                         data::Split split, const nlohmann::json* resume)
    : source_(data::open_sequences(plan, tokenizer, split, resume)),
      collator_(collator_for(plan, tokenizer.vocab())),
      batch_size_(batch_size_for(plan, split)),
      seed_(mask_seed_for(plan, split)) {}

std::optional<MaskedBatch> BatchStream::next() {
  rows_.clear();
  data::PackedSequence sequence;
  while (static_cast<int64_t>(rows_.size()) < batch_size_ && source_->next(sequence)) {
    rows_.push_back(std::move(sequence));
  }
  if (rows_.empty()) return std::nullopt;
  return collator_(rows_, seed_);
}

}  // namespace mlm::masking

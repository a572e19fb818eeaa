#include "mlm/masking/batch_stream.h"

#include "mlm/data/open_sequences.h"

namespace mlm::masking {

int64_t batch_size_for(const config::RunConfig& config, data::Split split) {
  if (split == data::Split::valid && config.eval.batch_size > 0) return config.eval.batch_size;
  return config.train.micro_batch_size;
}

uint64_t mask_seed_for(const config::RunConfig& config, data::Split split) {
  return static_cast<uint64_t>(split == data::Split::valid ? config.eval.seed : config.train.seed);
}

BatchStream::BatchStream(const config::RunConfig& config, const text::Tokenizer& tokenizer,
                         data::Split split, int rank, int world_size,
                         const nlohmann::json* resume)
    : source_(data::open_sequences(config, tokenizer, split, rank, world_size, resume)),
      collator_(config.masking, tokenizer.vocab(), config.data.seq_len, config.model.objective,
                !config.model.attend_across_documents),
      batch_size_(batch_size_for(config, split)),
      seed_(mask_seed_for(config, split)) {}

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

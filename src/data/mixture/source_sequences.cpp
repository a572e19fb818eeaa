#include "mlm/data/mixture/source_sequences.h"

#include "mlm/data/store/prepared_dataset.h"
#include "mlm/data/stream/streaming_indexed.h"
#include "mlm/util/errors.h"

namespace mlm::data {

std::unique_ptr<IndexedSequences> open_source_sequences(const config::DataPlan& plan,
                                                        const config::SourceConfig& source,
                                                        const text::Tokenizer& tokenizer,
                                                        Split split,
                                                        const nlohmann::json* resume) {
  // The run's settings with this corpus alone in place of the mixture.
  config::DataPlan single = plan;
  single.data.sources.clear();
  single.data.train_files = source.files;
  single.data.store = source.store;
  if (!source.store.empty()) {
    return open_prepared_indexed(single, tokenizer, split, resume);
  }
  return std::make_unique<StreamingIndexedSequences>(single, tokenizer, split, resume);
}

}  // namespace mlm::data

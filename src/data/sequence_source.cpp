#include "mlm/data/sequence_source.h"

#include "mlm/data/streaming_dataset.h"
#include "mlm/util/errors.h"

namespace mlm::data {
namespace {

// What kind of source the configuration reads, as resume_state() names it.
std::string configured_kind(const config::RunConfig& config) {
  return config.data.store.empty() ? "text" : "prepared";
}

}  // namespace

std::unique_ptr<SequenceSource> open_sequences(const config::RunConfig& config,
                                               const text::Tokenizer& tokenizer, Split split,
                                               int rank, int world_size,
                                               const nlohmann::json* resume) {
  const std::string kind = configured_kind(config);
  if (resume != nullptr) {
    // Positions written before sources had kinds are text-stream positions.
    const std::string saved = resume->is_object() ? resume->value("kind", "text") : "text";
    if (saved != kind) {
      throw ConfigError("data: the saved data position belongs to a " + saved +
                            " source, but this configuration reads a " + kind +
                            " source; resume with the data configuration the run started with",
                        "data");
    }
  }
  if (kind == "text") {
    std::optional<DataPosition> position;
    if (resume != nullptr) {
      try {
        position = DataPosition::from_json(*resume);
      } catch (const DataError& e) {
        throw CheckpointError(std::string("bad saved data position: ") + e.what());
      }
    }
    return std::make_unique<StreamingDataset>(config, tokenizer, split, rank, world_size, position);
  }
  throw ConfigError("data.store: reading prepared stores is not built in yet", "data.store");
}

}  // namespace mlm::data

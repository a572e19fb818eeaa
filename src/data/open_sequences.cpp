#include "mlm/data/open_sequences.h"

#include "mlm/data/mixture/mixture_source.h"
#include "mlm/data/store/prepared_dataset.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/util/errors.h"

namespace mlm::data {
namespace {

// What kind of source the configuration reads, as resume_state() names it.
std::string configured_kind(const config::DataConfig& data, Split split) {
  // A mixture's valid split of data.valid_files is their text stream (mixture_source.h).
  if (!data.sources.empty()) {
    return split == Split::valid && !data.valid_files.empty() ? "text" : "mixture";
  }
  return data.store.empty() ? "text" : "prepared";
}

}  // namespace

std::unique_ptr<SequenceSource> open_sequences(const config::DataPlan& plan,
                                               const text::Tokenizer& tokenizer, Split split,
                                               const nlohmann::json* resume) {
  const std::string kind = configured_kind(plan.data, split);
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
  if (kind == "mixture" || !plan.data.sources.empty()) {
    return open_mixture_sequences(plan, tokenizer, split, resume);
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
    return std::make_unique<StreamingDataset>(plan, tokenizer, split, position);
  }
  return std::make_unique<PreparedDataset>(plan, tokenizer, split, resume);
}

nlohmann::json reshard_position(const std::vector<nlohmann::json>& positions, int rank,
                                int world_size) {
  if (positions.empty()) throw CheckpointError("no saved data position to continue from");
  const nlohmann::json* frontier = nullptr;
  for (const auto& position : positions) {
    // A mixture's position counts every rank's draws (its "samples" and each source's "next"
    // are global) and its sources' states are of their whole streams, so the frontier's is
    // every new rank's too, as for a text stream.
    if (!position.is_object() || !position.contains("samples") || !position["samples"].is_number_integer()) {
      throw CheckpointError("bad saved data position: no global sample counter");
    }
    if (!frontier || position["samples"].get<int64_t>() > (*frontier)["samples"].get<int64_t>()) {
      frontier = &position;
    }
  }
  nlohmann::json resharded = *frontier;
  resharded["rank"] = rank;
  resharded["world_size"] = world_size;
  resharded["step_boundary"] = true;
  return resharded;
}

}  // namespace mlm::data

#include "mlm/data/stream/streaming_indexed.h"

#include <string>

#include "mlm/util/errors.h"

namespace mlm::data {
namespace {

constexpr const char* kStreamingIndexedKind = "text-indexed";

// The stream's position from a saved state, checked to be one of ours.
std::optional<DataPosition> streaming_indexed_position(const nlohmann::json* resume) {
  if (!resume) return std::nullopt;
  if (!resume->is_object() || resume->value("kind", "") != kStreamingIndexedKind ||
      !resume->contains("next") || !(*resume)["next"].is_number_integer() ||
      !resume->contains("position")) {
    throw DataError("data position of a mixture source: expected {\"kind\": \"" +
                    std::string(kStreamingIndexedKind) +
                    "\", \"next\", \"position\"} (a text source), got " + resume->dump());
  }
  DataPosition position = DataPosition::from_json((*resume)["position"]);
  if (position.samples != (*resume)["next"].get<int64_t>()) {
    throw DataError("data position of a mixture source: next " +
                    std::to_string((*resume)["next"].get<int64_t>()) +
                    " does not match its stream position (samples " +
                    std::to_string(position.samples) + ")");
  }
  return position;
}

}  // namespace

StreamingIndexedSequences::StreamingIndexedSequences(const config::DataPlan& plan,
                                                     const text::Tokenizer& tokenizer, Split split,
                                                     const nlohmann::json* resume) {
  const auto position = streaming_indexed_position(resume);
  config::DataPlan whole_stream = plan;  // rank 0 of 1 reads every sequence
  whole_stream.rank = 0;
  whole_stream.world_size = 1;
  stream_ = std::make_unique<StreamingDataset>(whole_stream, tokenizer, split, position);
  next_ = stream_->position().samples;
}

bool StreamingIndexedSequences::at(int64_t g, PackedSequence& out) {
  if (g < next_) {
    throw DataError("streaming source: sequence " + std::to_string(g) +
                    " asked after sequence " + std::to_string(next_ - 1) +
                    " (a text stream only goes forward)");
  }
  if (ended_) return false;
  for (; next_ < g; ++next_) {
    if (!stream_->next(out)) {
      ended_ = true;
      return false;
    }
  }
  if (!stream_->next(out)) {
    ended_ = true;
    return false;
  }
  ++next_;
  out.sample_id = static_cast<uint64_t>(g);
  return true;
}

nlohmann::json StreamingIndexedSequences::resume_state() const {
  return {{"kind", kStreamingIndexedKind}, {"next", next_}, {"position", stream_->resume_state()}};
}

}  // namespace mlm::data

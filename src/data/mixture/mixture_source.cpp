#include "mlm/data/mixture/mixture_source.h"

#include <optional>
#include <string>

#include "mlm/data/seeded_random.h"
#include "mlm/data/mixture/mixture_weights.h"
#include "mlm/data/mixture/source_sequences.h"
#include "mlm/data/stream/streaming_dataset.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::data {
namespace {

// Keeps the mixture's draws apart from the other seeded streams of train.seed.
constexpr uint64_t kMixtureDrawStream = 0x6D69787475726500ull;  // "mixture"

const char* mixture_split_name(Split split) { return split == Split::train ? "train" : "valid"; }

std::string weights_text(const std::vector<double>& weights) {
  std::string out = "[";
  for (size_t i = 0; i < weights.size(); ++i) {
    out += (i ? ", " : "") + nlohmann::json(weights[i]).dump();
  }
  return out + "]";
}

int64_t mixture_int(const nlohmann::json& state, const char* key) {
  if (!state.contains(key) || !state[key].is_number_integer()) {
    throw DataError(std::string("mixture data position: '") + key +
                    "' is missing or not an integer");
  }
  return state[key].get<int64_t>();
}

// A saved position, checked against this mixture: the kind, split, rank and world size
// (ConfigError as for a text stream), the weights and the number of sources (ConfigError
// naming data.sources), and its own consistency (DataError).
void check_mixture_state(const nlohmann::json& state, Split split, int rank, int world_size,
                         const std::vector<double>& weights) {
  if (!state.is_object() || state.value("kind", "") != "mixture") {
    const std::string kind = state.is_object() ? state.value("kind", "?") : "?";
    throw ConfigError("data.sources: the saved data position is of a '" + kind +
                          "' source, not of a mixture; a run cannot switch to data.sources "
                          "and resume its position (start a new run)",
                      "data.sources");
  }
  if (state.value("split", "") != mixture_split_name(split)) {
    throw DataError("mixture data position: saved for the " + state.value("split", "?") +
                    " split, opened for " + mixture_split_name(split));
  }
  const int64_t saved_rank = mixture_int(state, "rank");
  const int64_t saved_world = mixture_int(state, "world_size");
  if (saved_rank != rank || saved_world != world_size) {
    throw ConfigError("data position was saved by rank " + std::to_string(saved_rank) + " of " +
                      std::to_string(saved_world) + ", cannot resume rank " +
                      std::to_string(rank) + " of " + std::to_string(world_size) +
                      " exactly (keep the world size when resuming)");
  }
  std::vector<double> saved_weights;
  if (state.contains("weights") && state["weights"].is_array()) {
    for (const auto& w : state["weights"]) {
      if (!w.is_number()) throw DataError("mixture data position: a weight is not a number");
      saved_weights.push_back(w.get<double>());
    }
  }
  if (saved_weights != weights) {
    throw ConfigError("data.sources: the data position was saved for a mixture of " +
                          std::to_string(saved_weights.size()) + " sources with weights " +
                          weights_text(saved_weights) + ", this run has " +
                          std::to_string(weights.size()) + " with weights " +
                          weights_text(weights) +
                          "; restore data.sources or start a new run",
                      "data.sources");
  }
  if (!state.contains("sources") || !state["sources"].is_array() ||
      state["sources"].size() != weights.size()) {
    throw DataError("mixture data position: expected one entry per source in 'sources'");
  }
  const int64_t samples = mixture_int(state, "samples");
  int64_t counted = 0;
  for (const auto& source : state["sources"]) {
    if (!source.is_object() || !source.contains("state")) {
      throw DataError("mixture data position: a source entry lacks 'state'");
    }
    const int64_t next = mixture_int(source, "next");
    if (next < 0) throw DataError("mixture data position: a source's 'next' is negative");
    counted += next;
  }
  // Every position takes one sequence of one source; a rank stops just after one of its own,
  // or, continued on another world size (reshard_position), at the step boundary.
  const bool boundary = state.value("step_boundary", false);
  if (samples < 0 || counted != samples ||
      (!boundary && samples > 0 && (samples - 1) % world_size != rank)) {
    throw DataError("mixture data position: samples " + std::to_string(samples) +
                    " is not a position of rank " + std::to_string(rank) + " of " +
                    std::to_string(world_size) + " with these source counts");
  }
}

}  // namespace

size_t mixture_draw(uint64_t seed, int64_t g, const std::vector<double>& cumulative) {
  const uint64_t bits = mix_seed({seed, kMixtureDrawStream, static_cast<uint64_t>(g)});
  const double u = static_cast<double>(bits >> 11) * 0x1.0p-53;  // 53 random bits in [0, 1)
  const double x = u * cumulative.back();
  for (size_t s = 0; s < cumulative.size(); ++s) {
    if (x < cumulative[s]) return s;
  }
  // Only by rounding: the last source with a weight.
  size_t last = cumulative.size() - 1;
  while (last > 0 && cumulative[last] == cumulative[last - 1]) --last;
  return last;
}

std::vector<double> cumulative_weights(const std::vector<double>& weights) {
  std::vector<double> cumulative;
  double total = 0;
  for (const double w : weights) {
    total += w;
    cumulative.push_back(total);
  }
  return cumulative;
}

MixtureSource::MixtureSource(const config::DataPlan& plan, const text::Tokenizer& tokenizer,
                             Split split, const nlohmann::json* resume)
    : split_(split), rank_(plan.rank), world_size_(plan.world_size), seed_(plan.seed) {
  const auto& sources = plan.data.sources;
  if (sources.empty()) {
    throw ConfigError("data.sources is empty: a mixture needs at least one source",
                      "data.sources");
  }
  weights_ = mixture_weights(plan, tokenizer);
  cumulative_ = cumulative_weights(weights_);
  if (resume) check_mixture_state(*resume, split, rank_, world_size_, weights_);

  next_index_.assign(sources.size(), 0);
  for (size_t s = 0; s < sources.size(); ++s) {
    const nlohmann::json* state = nullptr;
    if (resume) {
      const auto& entry = (*resume)["sources"][s];
      next_index_[s] = entry["next"].get<int64_t>();
      if (!entry["state"].is_null()) state = &entry["state"];
    }
    // A source of weight 0 is never drawn in this phase: its files are not even opened. The
    // valid split reads every source's.
    if (split == Split::train && weights_[s] == 0) {
      sources_.push_back(nullptr);
      continue;
    }
    sources_.push_back(open_source_sequences(plan, sources[s], tokenizer, split, state));
  }
  if (resume) {
    samples_ = (*resume)["samples"].get<int64_t>();
    if (split == Split::valid) {
      const int64_t current = mixture_int(*resume, "current");
      if (current < 0 || current > static_cast<int64_t>(sources.size())) {
        throw DataError("mixture data position: 'current' " + std::to_string(current) +
                        " is not a source");
      }
      current_ = static_cast<size_t>(current);
    }
    // This rank's share of the positions before samples_: g < samples_, g % N == r.
    const int64_t before = samples_ - rank_;
    sequences_ = before > 0 ? (before - 1) / world_size_ + 1 : 0;
  }
  log::info("data", "{} split: a mixture of {} sources, weights {}, rank {} of {}{}",
            mixture_split_name(split), sources.size(), weights_text(weights_), rank_, world_size_,
            resume ? ", resuming at mixture position " + std::to_string(samples_) : "");
}

bool MixtureSource::next(PackedSequence& out) {
  const bool got = split_ == Split::train ? next_train(out) : next_valid(out);
  if (got) {
    ++sequences_;
    tokens_ += static_cast<int64_t>(out.ids.size());
  }
  return got;
}

bool MixtureSource::next_train(PackedSequence& out) {
  for (;;) {
    const int64_t g = samples_;
    const size_t s = mixture_draw(seed_, g, cumulative_);
    const int64_t i = next_index_[s];
    // Other ranks' positions advance the counters only: no data is read for them here.
    if (g % world_size_ == rank_ && !sources_[s]->at(i, out)) {
      throw DataError("data.sources[" + std::to_string(s) + "]: the training stream ended at " +
                      "its sequence " + std::to_string(i) + " (a training split never ends)");
    }
    ++samples_;
    ++next_index_[s];
    if (g % world_size_ == rank_) {
      out.sample_id = static_cast<uint64_t>(g);
      return true;
    }
  }
}

bool MixtureSource::next_valid(PackedSequence& out) {
  // Where one source's split ends is known only by reading it, so every rank reads every
  // valid sequence (valid splits are small) and keeps its own.
  while (current_ < sources_.size()) {
    if (!sources_[current_]->at(next_index_[current_], out)) {
      ++current_;
      continue;
    }
    const int64_t g = samples_++;
    ++next_index_[current_];
    if (g % world_size_ == rank_) {
      out.sample_id = static_cast<uint64_t>(g);
      return true;
    }
  }
  return false;
}

nlohmann::json MixtureSource::resume_state() const {
  nlohmann::json sources = nlohmann::json::array();
  for (size_t s = 0; s < sources_.size(); ++s) {
    sources.push_back({{"next", next_index_[s]},
                       {"state", sources_[s] ? sources_[s]->resume_state() : nlohmann::json()}});
  }
  nlohmann::json state = {{"kind", "mixture"},
                          {"split", mixture_split_name(split_)},
                          {"samples", samples_},
                          {"rank", rank_},
                          {"world_size", world_size_},
                          {"weights", weights_},
                          {"sources", std::move(sources)}};
  if (split_ == Split::valid) state["current"] = current_;
  return state;
}

int64_t MixtureSource::epoch() const {
  for (const auto& source : sources_) {
    if (source) return source->epoch();
  }
  return 0;
}

DataCounters MixtureSource::counters() const {
  DataCounters c;
  for (const auto& source : sources_) {
    if (!source) continue;
    const DataCounters one = source->counters();
    c.documents += one.documents;
    c.bad_records += one.bad_records;
    c.invalid_utf8_fixes += one.invalid_utf8_fixes;
    c.bytes_read += one.bytes_read;
  }
  c.sequences = sequences_;
  c.tokens = tokens_;
  return c;
}

std::unique_ptr<SequenceSource> open_mixture_sequences(const config::DataPlan& plan,
                                                       const text::Tokenizer& tokenizer,
                                                       Split split, const nlohmann::json* resume) {
  if (split == Split::valid && !plan.data.valid_files.empty()) {
    std::optional<DataPosition> position;
    if (resume) {
      if (resume->is_object() && resume->value("kind", "text") != "text") {
        throw ConfigError("data.valid_files: the saved valid position is of a '" +
                              resume->value("kind", "") + "' source, not of data.valid_files",
                          "data.valid_files");
      }
      position = DataPosition::from_json(*resume);
    }
    return std::make_unique<StreamingDataset>(plan, tokenizer, split, position);
  }
  return std::make_unique<MixtureSource>(plan, tokenizer, split, resume);
}

}  // namespace mlm::data

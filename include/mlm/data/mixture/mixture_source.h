#pragma once
// A weighted mixture of corpora (data.sources): what the trainer draws from when a run names
// several sources, each with a weight.
//
// Train: one global mixture stream, the same on every rank. Position g draws its source s(g)
// with probability weight_s / sum of the weights, from a counter-based seeded draw of
// (train.seed, g) (mixture_draw below), so the draw needs no state and no history. The
// sequence at g is the next one of that source: source s's own global stream at index i_s(g)
// = how many earlier positions drew s, with sample_id set to g. Each source keeps its own
// order and its own epochs: a small source wraps around and repeats while a big one is still
// in its first pass. Sharding is by position as on the streaming path: rank r of N keeps
// g % N == r, so N ranks with micro-batch B see exactly the sequences and sample_ids of one
// process with micro-batch N·B. Every rank still counts every position for every source; a
// prepared source reads only this rank's sequences, a text source reads its whole stream
// and drops the others' (streaming_indexed.h).
//
// Valid: one pass, unshuffled, sharded g % N == r the same way. With data.valid_files set it
// is the streaming valid split of those files, as without a mixture (open_mixture_sequences
// returns a StreamingDataset, resume kind "text"). Otherwise it is the sources' own valid
// splits (each holding out data.valid_fraction of its documents, or a store's valid split)
// one after another, in the order of data.sources, whatever the weights.
//
// The weights are mixture_weights() of the plan (mixture_weights.h: data.temperature and
// data.source_weights, which each phase may set; a phase starts its own stream at g = 0 under
// its own seed). A source of weight 0 is not opened for train and never drawn.
//
// resume_state(): {"kind": "mixture", "split", "samples": the next g, "rank", "world_size",
// "weights", "sources": [{"next": i_s, "state": the source's resume_state(), null for a
// source not opened}...], and for valid "current": the source being read}. A position of a
// mixture with other weights or another number of sources is refused (ConfigError naming
// data.sources). samples and every i_s count all ranks' positions and a source's state is of
// its whole stream, so on another world size (same global batch) every rank continues from
// the position of the rank furthest on (reshard_position, "step_boundary": true).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// The source that position g of the mixture stream draws: the first s with
/// u(seed, g) * total < cumulative[s], where cumulative holds the running sums of the
/// weights (the last = total) and u is uniform in [0, 1).
size_t mixture_draw(uint64_t seed, int64_t g, const std::vector<double>& cumulative);

/// The running sums of `weights`: what mixture_draw takes.
std::vector<double> cumulative_weights(const std::vector<double>& weights);

class MixtureSource : public SequenceSource {
 public:
  /// Opens every source of the plan's data.sources for `split` (open_source_sequences), at
  /// `resume` (null = the start; a resume_state() of a mixture of the same sources, rank and
  /// world size).
  MixtureSource(const config::DataPlan& plan, const text::Tokenizer& tokenizer, Split split,
                const nlohmann::json* resume = nullptr);

  bool next(PackedSequence& out) override;
  nlohmann::json resume_state() const override;
  /// Passes over the first source drawn from.
  int64_t epoch() const override;
  /// sequences and tokens: this rank's; the rest summed over the sources.
  DataCounters counters() const override;

 private:
  bool next_train(PackedSequence& out);
  bool next_valid(PackedSequence& out);

  Split split_;
  int rank_, world_size_;
  uint64_t seed_;
  std::vector<double> weights_, cumulative_;
  std::vector<std::unique_ptr<IndexedSequences>> sources_;
  std::vector<int64_t> next_index_;  // i_s: the index of source s's next sequence
  int64_t samples_ = 0;              // g of the next position of the mixture stream
  size_t current_ = 0;               // valid: the source being read
  int64_t sequences_ = 0, tokens_ = 0;
};

/// The mixture's `split` for the plan's rank: a MixtureSource, except the valid split of
/// data.valid_files, which is their streaming valid split (see above).
std::unique_ptr<SequenceSource> open_mixture_sequences(const config::DataPlan& plan,
                                                       const text::Tokenizer& tokenizer,
                                                       Split split,
                                                       const nlohmann::json* resume = nullptr);

}  // namespace mlm::data

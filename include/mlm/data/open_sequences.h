#pragma once
// The factory of sequence sources (sequence_source.h): which implementation a configuration
// reads. The one file that knows all three (stream/, store/, mixture/); a new kind of source
// is added here.
#include <nlohmann/json.hpp>

#include <memory>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// The sequences of `split` for the plan's rank, from the source its data section names:
/// data.sources (a mixture), data.store (a prepared store), else the streaming text path.
/// `resume` (null = the start) must be a resume_state() of the same kind of source, rank
/// and world size.
std::unique_ptr<SequenceSource> open_sequences(const config::DataPlan& plan,
                                               const text::Tokenizer& tokenizer, Split split,
                                               const nlohmann::json* resume = nullptr);

/// Where rank `rank` of `world_size` continues a train split whose ranks, of another world
/// size, saved `positions` (each rank's resume_state()) at one optimizer-step boundary. The
/// streaming path and a prepared store number one global stream whatever the world size,
/// and at a step boundary every global sequence before the furthest rank's position has been
/// trained on: that position, labelled with the new rank, is where every new rank goes on
/// (each taking its own share of what follows). A mixture's position is global the same way
/// (mixture/mixture_source.h).
nlohmann::json reshard_position(const std::vector<nlohmann::json>& positions, int rank,
                                int world_size);

}  // namespace mlm::data

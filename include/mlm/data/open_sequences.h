#pragma once
// The factory of sequence sources (sequence_source.h): which implementation a configuration
// reads. The one file that knows all three (stream/, store/, mixture/); a new kind of source
// is added here.
#include <nlohmann/json.hpp>

#include <memory>

#include "mlm/config/run_config.h"
#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// The sequences of `split` for rank `rank` of `world_size`, from the source the
/// configuration names: data.sources (a mixture), a prepared store (data.format: prepared,
/// or data.store holding a manifest), else the streaming text path. `resume` (null = the
/// start) must be a resume_state() of the same kind of source, rank and world size.
std::unique_ptr<SequenceSource> open_sequences(const config::RunConfig& config,
                                               const text::Tokenizer& tokenizer, Split split,
                                               int rank = 0, int world_size = 1,
                                               const nlohmann::json* resume = nullptr);

}  // namespace mlm::data

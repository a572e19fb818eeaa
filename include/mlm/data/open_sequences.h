#pragma once
// The factory of sequence sources (sequence_source.h): which implementation a configuration
// reads. The one file that knows all three (stream/, store/, mixture/); a new kind of source
// is added here.
#include <nlohmann/json.hpp>

#include <memory>

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

}  // namespace mlm::data

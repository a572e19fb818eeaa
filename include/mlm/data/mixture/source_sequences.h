#pragma once
// One corpus of a weighted mixture (data.sources[i]) opened as an IndexedSequences: its
// prepared store when the entry names one (store), else its text files on the streaming path.
#include <nlohmann/json.hpp>

#include <memory>

#include "mlm/config/data_plan.h"
#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// The whole global stream of `source`'s `split`, read with every other setting of `plan`
/// (packing, seq_len, seed, data.valid_fraction for a held-out valid split). A store's order
/// depends on the global batch, world size x the plan's step_sequences (epoch_order.h),
/// never on the world size alone. `resume` (null = the start) is the resume_state() of the
/// same source.
std::unique_ptr<IndexedSequences> open_source_sequences(const config::DataPlan& plan,
                                                        const config::SourceConfig& source,
                                                        const text::Tokenizer& tokenizer,
                                                        Split split,
                                                        const nlohmann::json* resume = nullptr);

}  // namespace mlm::data

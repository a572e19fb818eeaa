#pragma once
// One corpus of a weighted mixture (data.sources[i]) opened as an IndexedSequences: its
// prepared store when the entry names one (store), else its text files on the streaming path.
#include <nlohmann/json.hpp>

#include <memory>

#include "mlm/config/run_config.h"
#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// The whole global stream of `source`'s `split`, read with every other setting of `config`
/// (packing, seq_len, seed, data.valid_fraction for a held-out valid split). A store's order
/// depends on the global micro-batch, world_size x train.micro_batch_size (epoch_order.h),
/// never on the world size alone. `resume` (null = the start) is the resume_state() of the
/// same source.
std::unique_ptr<IndexedSequences> open_source_sequences(const config::RunConfig& config,
                                                        const config::SourceConfig& source,
                                                        const text::Tokenizer& tokenizer,
                                                        Split split, int world_size,
                                                        const nlohmann::json* resume = nullptr);

}  // namespace mlm::data

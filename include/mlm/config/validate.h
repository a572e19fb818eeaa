#pragma once
#include <cstdint>
#include <optional>

#include "mlm/config/run_config.h"
#include "mlm/config/validate_masking.h"

namespace mlm::config {

/// Throws ConfigError (with key()) for the first out-of-range or inconsistent value,
/// saying what would be valid.
void validate_config(const RunConfig& config);

/// Throws ConfigError naming data.train_files when it is empty. Separate from
/// validate_config because only commands that read the corpus need it (--print-config,
/// mlm-export and mlm-eval on a checkpoint do not).
void require_training_data(const RunConfig& config);

/// RoBERTa's position table holds its sequences: data.seq_len + pad_id + 1 rows
/// (config::position_offset) within model.max_position_embeddings, else a ConfigError naming
/// model.max_position_embeddings with the numbers. validate_config checks it before the
/// tokenizer is known (pad_id nullopt: the least offset, 1); a run checks it again with the
/// tokenizer's pad id. Nothing for the other architectures.
void require_position_room(const ModelConfig& model, int64_t seq_len, std::optional<int64_t> pad_id);

}  // namespace mlm::config

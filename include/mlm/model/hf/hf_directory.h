#pragma once
// A Hugging Face model directory's files as `save_pretrained` (or mlm-export) leaves them:
// config.json and the weights as model.safetensors, pytorch_model.bin, or either one sharded
// with an index (model.safetensors.index.json, pytorch_model.bin.index.json). mlm-train's own
// checkpoints hold model.pt, which is read the same way. Files only: what config.json means
// is the architecture's (mlm/model/pretrained/hf_config.h).
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/model/hf/weight_format.h"
#include "mlm/model/tensor_dict.h"

namespace mlm::model {

/// The weight file (or shard index) a directory's weights are read from, in the order
/// `transformers` prefers them; "" when the directory holds none.
std::string find_hf_weights(const std::string& dir);

/// Every tensor of the directory's weights (all shards of an index). CheckpointError naming
/// the file: no weights, an index naming a shard that is missing or lacks the tensor, a
/// tensor found twice, or a damaged file.
TensorDict read_hf_weights(const std::string& dir);

/// config.json and the weights in `format` into the directory `dir` (made if missing), each
/// file through a temporary renamed into place. CheckpointError when the directory cannot be
/// made or a file cannot be written.
void write_hf_files(const std::string& dir, const nlohmann::json& config_json, const TensorDict& weights,
                    WeightFormat format);

}  // namespace mlm::model

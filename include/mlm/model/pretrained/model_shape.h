#pragma once
// A model shape read from a file (config.json), checked before anything is built from it:
// against this machine's memory, against the weights beside it, and against the model a
// model.init_from continues.
#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/tensor_dict.h"

namespace mlm::model {

/// The fields that decide the weights' shapes (and for ModernBERT which layers look how far)
/// where `theirs` (a config.json's) differs from `ours`: "hidden_size 768 (set
/// model.hidden_size: 256), ..."; empty when they agree.
std::string shape_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs);

/// The fp32 parameters a model of `c`'s shape holds with `vocab_rows` embedding rows (the
/// generator too for objective rtd), in double since a file's dimensions may overflow int64.
double estimated_parameters(const config::ModelConfig& c, int64_t vocab_rows);

/// The shape a config.json at `path` gave: every dimension at least 1, num_attention_heads
/// dividing hidden_size, and the weights within the machine's physical memory.
/// CheckpointError naming the file, the key and the value.
void require_buildable_shape(const config::ModelConfig& c, const std::string& path);

/// config.json (at `config_path`, read into `c`) against the weights beside it, before a model
/// is built from it: the tensors that carry a dimension (the spec's weight_dimensions) have
/// the shape it gives, and the layer keys number num_hidden_layers. CheckpointError naming
/// config.json, the key, its value, the weight file and the tensor's shape. Tensors it lacks
/// are not checked (the load names them).
void require_config_matches_weights(const config::ModelConfig& c, const TensorDict& weights,
                                    const std::string& config_path, const std::string& weights_path);

}  // namespace mlm::model

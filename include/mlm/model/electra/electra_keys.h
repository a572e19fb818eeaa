#pragma once
// ELECTRA's keys: the shared model.* keys and the replaced-token-detection pair's (embedding_size,
// the generator ratios, rtd_weight, ...); it reads no option of its own. Torch-free: part of
// the config library (src/model/electra/electra_keys.cpp).
namespace mlm::config {

class ArchitectureKeys;

/// electra's keys (config/architecture_keys.h).
const ArchitectureKeys& electra_keys();

}  // namespace mlm::config

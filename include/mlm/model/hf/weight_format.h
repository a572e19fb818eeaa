#pragma once
// How exported weights are stored (no LibTorch here: the command-line mains include it).

namespace mlm::model {

/// model.safetensors (what the hub holds today) or pytorch_model.bin (torch.save's zip
/// format, torch.load(weights_only=True)-able).
enum class WeightFormat { safetensors, bin };

}  // namespace mlm::model

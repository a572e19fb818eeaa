#pragma once
// Reading and writing `torch.save`-compatible weight files (the zip format of PyTorch >= 1.6)
// without Python. read_tensor_file() runs its own small unpickler over the zip records (the
// opcodes torch.save and LibTorch's pickler emit, nothing else): torch::pickle_load cannot
// rebuild the collections.OrderedDict that every `model.state_dict()` saved from Python is
// (LibTorch 1.13 turned it into None), and a reader of our own does not depend on the version.
#include <string>

#include "mlm/model/tensor_dict.h"

namespace mlm::model {

/// Reads a {str: Tensor} dict (in file order; tensors that shared storage in the file still
/// share it) saved by Python's `torch.save` (dict or OrderedDict, tensors or
/// Parameters) or by torch::pickle_save. Throws CheckpointError naming `path` for a missing,
/// truncated or foreign file, the legacy (pre-1.6) format, or a value that is not a tensor.
TensorDict read_tensor_file(const std::string& path);

/// Writes `tensors` as a plain {str: Tensor} dict in torch.save's zip format, loadable by
/// Python's torch.load(weights_only=True), via a temporary file renamed into place. Tensors
/// are copied to contiguous CPU tensors first, so views do
/// not drag their whole storage along; tensors that are the same object stay shared.
void write_tensor_file(const std::string& path, const TensorDict& tensors);

}  // namespace mlm::model

#pragma once
// The safetensors weight format, the one the Hugging Face hub holds today: an 8-byte
// little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then the
// raw little-endian tensor bytes. Read and written here without Python or a library.
#include <string>

#include "mlm/model/hf/tensor_file.h"

namespace mlm::model {

/// Reads every tensor of a .safetensors file. CheckpointError naming `path` and what is wrong
/// for a missing or short file, a header length past the end of the file, a header that is not
/// JSON, an unknown dtype, a shape that disagrees with its byte range, or data offsets that
/// point outside the file or overlap.
TensorDict read_safetensors(const std::string& path);

/// Writes `tensors` (copied to contiguous CPU tensors) via a temporary file renamed into place.
/// Names that alias an earlier tensor (tied weights: the same tensor object) are left out, as
/// `transformers` does, since the format cannot share storage.
void write_safetensors(const std::string& path, const TensorDict& tensors);

}  // namespace mlm::model

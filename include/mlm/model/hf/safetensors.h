#pragma once
// The safetensors weight format, the one the Hugging Face hub holds today: an 8-byte
// little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then the
// raw little-endian tensor bytes. Read and written here without Python or a library.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mlm/model/hf/tensor_file.h"

namespace mlm::model {

/// A .safetensors file's header, checked as read_safetensors() checks it, and its tensors read
/// one at a time on demand: what streams a file without holding all of it (mlm-merge).
class SafetensorsFile {
 public:
  struct Info {
    std::string name;
    c10::ScalarType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;  // byte range within the data section
  };

  /// Reads and checks the header. CheckpointError as read_safetensors().
  explicit SafetensorsFile(std::string path);
  const std::string& path() const { return path_; }
  /// In data order.
  const std::vector<Info>& tensors() const { return tensors_; }
  /// One tensor's bytes. CheckpointError naming the file when they cannot be read.
  torch::Tensor read(const Info& info) const;

 private:
  std::string path_;
  uint64_t data_start_ = 0;
  std::vector<Info> tensors_;
};

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

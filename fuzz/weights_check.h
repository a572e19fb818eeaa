#pragma once
// The weight-file fuzz targets' shared check: tensors read from a file are written back in
// both formats (safetensors, torch.save) and read again unchanged.
#include <torch/types.h>

#include <cstring>
#include <string>

#include "fuzz_support.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/hf/tensor_file.h"

namespace mlm::fuzz {

/// Round trips larger than this (the sum of the tensors' sizes) are skipped: a view of a
/// small storage may be large (a stride of 0), and writing it would copy it out in full.
inline constexpr int64_t kMaxRoundTripBytes = int64_t{64} << 20;

inline bool same_tensor(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const auto ac = a.contiguous(), bc = b.contiguous();
  const size_t bytes = static_cast<size_t>(ac.numel()) * ac.element_size();
  return bytes == 0 || std::memcmp(ac.data_ptr(), bc.data_ptr(), bytes) == 0;
}

inline void check_same(const char* target, const char* format, const model::TensorDict& want,
                       const model::TensorDict& got) {
  if (want.size() != got.size())
    fail(target, std::string(format) + " round trip: " + std::to_string(want.size()) + " tensors became " +
                     std::to_string(got.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].first != got[i].first || !same_tensor(want[i].second, got[i].second))
      fail(target, std::string(format) + " round trip changed tensor '" + want[i].first + "'");
  }
}

/// Checks what a reader returned and round-trips it through both writers. A name written twice
/// is allowed by neither format's reader, so dictionaries with repeated names are not written.
inline void check_tensors(const char* target, const model::TensorDict& tensors, const std::string& scratch) {
  int64_t bytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i].second;
    if (!t.defined()) fail(target, "tensor '" + tensors[i].first + "' is undefined");
    if (!t.device().is_cpu()) fail(target, "tensor '" + tensors[i].first + "' is not on the CPU");
    bytes += t.numel() * static_cast<int64_t>(t.element_size());
    for (size_t k = 0; k < i; ++k)
      if (tensors[k].first == tensors[i].first) return;
  }
  if (bytes > kMaxRoundTripBytes) return;
  // Distinct tensor objects: the writers leave out (safetensors) or share (torch.save) a tensor
  // object listed twice; a reader never returns one twice.
  model::TensorDict copies;
  for (const auto& [name, t] : tensors) copies.emplace_back(name, t.clone());
  const std::string st = scratch + ".safetensors", pt = scratch + ".pt";
  model::write_safetensors(st, copies);
  check_same(target, "safetensors", copies, model::read_safetensors(st));
  model::write_tensor_file(pt, copies);
  check_same(target, "torch.save", copies, model::read_tensor_file(pt));
  std::remove(st.c_str());
  std::remove(pt.c_str());
}

}  // namespace mlm::fuzz

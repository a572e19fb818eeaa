#include "mlm/train/checkpoint/rng_state.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include <mutex>

#include "mlm/util/errors.h"

namespace mlm::train {
namespace {

std::string to_hex(const at::Tensor& bytes) {
  static const char* digits = "0123456789abcdef";
  const auto contiguous = bytes.contiguous();
  const auto* data = contiguous.data_ptr<uint8_t>();
  std::string out;
  out.reserve(static_cast<size_t>(contiguous.numel()) * 2);
  for (int64_t i = 0; i < contiguous.numel(); ++i) {
    out.push_back(digits[data[i] >> 4]);
    out.push_back(digits[data[i] & 15]);
  }
  return out;
}

at::Tensor from_hex(const std::string& hex, const std::string& origin) {
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw CheckpointError(origin + ": RNG state is not hexadecimal");
  };
  if (hex.size() % 2 != 0) throw CheckpointError(origin + ": RNG state has an odd length");
  auto out = torch::empty({static_cast<int64_t>(hex.size() / 2)}, torch::kUInt8);
  auto* data = out.data_ptr<uint8_t>();
  for (size_t i = 0; i < hex.size() / 2; ++i) {
    data[i] = static_cast<uint8_t>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
  }
  return out;
}

std::string generator_state(at::Generator generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  return to_hex(generator.get_state());
}

void set_generator_state(at::Generator generator, const std::string& hex,
                         const std::string& origin) {
  const auto state = from_hex(hex, origin);
  std::lock_guard<std::mutex> lock(generator.mutex());
  try {
    generator.set_state(state);
  } catch (const c10::Error& e) {
    throw CheckpointError(origin + ": RNG state rejected by LibTorch: " + e.what_without_backtrace());
  }
}

}  // namespace

nlohmann::json capture_rng_state() {
  nlohmann::json state;
  state["torch_cpu"] = generator_state(at::detail::getDefaultCPUGenerator());
  if (torch::cuda::is_available()) {
    auto& cuda = state["torch_cuda"];
    cuda = nlohmann::json::array();
    for (int64_t i = 0; i < static_cast<int64_t>(torch::cuda::device_count()); ++i) {
      cuda.push_back(generator_state(
          at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<int8_t>(i)))));
    }
  }
  return state;
}

void restore_rng_state(const nlohmann::json& state, const std::string& origin) {
  if (!state.is_object() || !state.contains("torch_cpu") || !state["torch_cpu"].is_string()) {
    throw CheckpointError(origin + ": no \"torch_cpu\" RNG state");
  }
  set_generator_state(at::detail::getDefaultCPUGenerator(), state["torch_cpu"].get<std::string>(),
                      origin);
  if (state.contains("torch_cuda") && torch::cuda::is_available()) {
    const auto& cuda = state["torch_cuda"];
    const auto count = std::min<size_t>(cuda.size(), torch::cuda::device_count());
    for (size_t i = 0; i < count; ++i) {
      set_generator_state(
          at::globalContext().defaultGenerator(at::Device(at::kCUDA, static_cast<int8_t>(i))),
          cuda[i].get<std::string>(), origin);
    }
  }
}

}  // namespace mlm::train

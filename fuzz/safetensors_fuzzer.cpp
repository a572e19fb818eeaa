// libFuzzer target: the safetensors reader (mlm/model/hf/safetensors.h) on arbitrary file
// contents. Only mlm::CheckpointError may escape (anything else ends the process and is
// reported as a crash; a hang or a runaway allocation is reported by libFuzzer's -timeout and
// -rss_limit_mb). What it reads must be CPU tensors that both writers (safetensors and
// torch.save) write and read back unchanged.
//
// Input: the file. Seeds: safetensors files the reader's tests write (fuzz/seeds/).
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/util/errors.h"
#include "weights_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = mlm::fuzz::scratch_path("safetensors_fuzz");
  mlm::fuzz::write_bytes("safetensors_fuzzer", path,
                         std::string_view(reinterpret_cast<const char*>(data), size));
  std::optional<mlm::model::TensorDict> tensors;
  try {
    tensors = mlm::model::read_safetensors(path);
  } catch (const mlm::CheckpointError&) {
    // the one allowed outcome for a bad file
  }
  std::remove(path.c_str());
  if (tensors) mlm::fuzz::check_tensors("safetensors_fuzzer", *tensors, path + ".out");
  return 0;
}

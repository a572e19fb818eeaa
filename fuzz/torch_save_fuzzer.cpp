// libFuzzer target: the torch.save reader (mlm/model/hf/tensor_file.h: the zip container and
// its own unpickler) on arbitrary input. Only mlm::CheckpointError may escape (anything else
// ends the process and is reported as a crash; a hang or a runaway allocation is reported by
// libFuzzer's -timeout and -rss_limit_mb). What it reads must be CPU tensors that both writers
// (safetensors and torch.save) write and read back unchanged.
//
// Input: byte 0 chooses the form of the rest.
//   even: the rest is the file (the zip container itself is fuzzed);
//   odd:  the rest is archive/data.pkl, written into a well-formed zip (with the right CRCs)
//         beside storage records data/0 .. data/7 of 0, 1, 2, 4, ... 64, 1024 bytes, so that
//         the unpickler gets the mutations a damaged zip would not pass on.
// Seeds: the weight files of tests/fixtures/model (even) and their data.pkl (odd).
#include <caffe2/serialize/inline_container.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/util/errors.h"
#include "weights_check.h"

namespace {

constexpr const char* kTarget = "torch_save_fuzzer";
constexpr size_t kRecordBytes[] = {0, 1, 2, 4, 8, 16, 64, 1024};

// The zip torch.save writes (archive/data.pkl, archive/data/<k>, archive/version), around
// `pickle`.
void write_archive(const std::string& path, const std::string& pickle) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  {
    caffe2::serialize::PyTorchStreamWriter zip([&](const void* bytes, size_t n) {
      out.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
      return n;
    });
    zip.writeRecord("data.pkl", pickle.data(), pickle.size());
    std::vector<char> storage(1024);
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<char>(i * 37 + 11);
    for (size_t k = 0; k < std::size(kRecordBytes); ++k)
      zip.writeRecord("data/" + std::to_string(k), storage.data(), kRecordBytes[k]);
    zip.writeEndOfFile();
  }
  if (!out) mlm::fuzz::fail(kTarget, "cannot write " + path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const std::string path = mlm::fuzz::scratch_path("torch_save_fuzz");
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    write_archive(path, rest);
  } else {
    mlm::fuzz::write_bytes(kTarget, path, rest);
  }
  std::optional<mlm::model::TensorDict> tensors;
  try {
    tensors = mlm::model::read_tensor_file(path);
  } catch (const mlm::CheckpointError&) {
    // the one allowed outcome for a bad file
  }
  std::remove(path.c_str());
  if (tensors) mlm::fuzz::check_tensors(kTarget, *tensors, path + ".out");
  return 0;
}

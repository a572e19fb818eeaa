// libFuzzer target: a Hugging Face model directory's config.json as mlm-eval, mlm-finetune and
// model.init_from read it (mlm/model/hf/hf_directory.h, mlm/model/rtd/rtd_directory.h). Only
// mlm::CheckpointError may escape (anything else ends the process and is reported as a crash;
// a hang or a runaway allocation is reported by libFuzzer's -timeout and -rss_limit_mb).
//
// Input: one config.json; or, when it holds a NUL byte, a replaced-token-detection pair's
// generator/config.json (before it) and discriminator/config.json (after it), read as each
// registered architecture's pair.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "mlm/model/architectures.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/rtd/rtd_directory.h"
#include "mlm/util/errors.h"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = [] {
    const std::string d = mlm::fuzz::scratch_path("config_json_fuzz");
    fs::create_directories(fs::path(d) / "generator");
    fs::create_directories(fs::path(d) / "discriminator");
    return d;
  }();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const mlm::config::ModelConfig base;  // the defaults, as a run without a model section
  if (nul == std::string_view::npos) {
    const std::string path = dir + "/config.json";
    mlm::fuzz::write_bytes("config_json_fuzzer", path, input);
    try {
      mlm::model::model_config_from_hf(path, base);
      mlm::model::require_same_pad_id(path, 1);
    } catch (const mlm::CheckpointError&) {
      // the one allowed outcome for a bad file
    }
    return 0;
  }
  mlm::fuzz::write_bytes("config_json_fuzzer", dir + "/generator/config.json", input.substr(0, nul));
  mlm::fuzz::write_bytes("config_json_fuzzer", dir + "/discriminator/config.json", input.substr(nul + 1));
  for (const auto* spec : mlm::model::architecture_specs()) {
    if (spec->rtd_networks() == nullptr) continue;
    try {
      mlm::model::rtd_pair_config(*spec, dir, base);
    } catch (const mlm::CheckpointError&) {
      // the one allowed outcome for a bad file
    }
  }
  return 0;
}

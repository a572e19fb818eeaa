#include "spm_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "mlm/util/errors.h"

namespace mlm::text {
namespace {

constexpr const char* kBridgeName = "libmlm_spm_bridge.so";

std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("MLM_SPM_BRIDGE"); env && *env) paths.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / kBridgeName).string());
    paths.push_back((exe.parent_path().parent_path() / kBridgeName).string());
  }
#ifdef MLM_SPM_BRIDGE_DIR
  paths.push_back(std::string(MLM_SPM_BRIDGE_DIR) + "/" + kBridgeName);
#endif
  return paths;
}

// A link-map namespace of its own, so sentencepiece binds to its bundled protobuf and never
// sees LibTorch's. (RTLD_DEEPBIND is not enough: the bridge's libstdc++ references then miss
// the executable's copy-relocated std::cerr and crash when sentencepiece logs.) Nothing but
// plain bytes crosses the C interface, so the namespace's own C++ runtime is harmless.
// Sanitizer runtimes do not support other namespaces; sanitized builds test the torch-free
// stages, where no second protobuf is loaded.
void* open_library(const std::string& path) {
#ifdef MLM_SANITIZE
  return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
#else
  return dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
}

const MlmSpmApi* open_bridge() {
  std::string tried;
  for (const auto& path : candidate_paths()) {
    if (!std::filesystem::exists(path)) {
      tried += "\n  " + path + " (missing)";
      continue;
    }
    void* handle = open_library(path);
    if (!handle) {
      tried += "\n  " + path + " (" + dlerror() + ")";
      continue;
    }
    using ApiFn = const MlmSpmApi* (*)();
    auto fn = reinterpret_cast<ApiFn>(dlsym(handle, "mlm_spm_bridge_api"));
    const MlmSpmApi* api = fn ? fn() : nullptr;
    if (api && api->abi_version == kMlmSpmAbiVersion) return api;
    tried += "\n  " + path + " (not a compatible bridge)";
  }
  std::string message = std::string("cannot open the sentencepiece bridge ") + kBridgeName +
                        " (set MLM_SPM_BRIDGE to its path); tried:" + tried;
  for (auto& c : message) if (c == '\n') c = ' ';
  throw DataError(message);
}

}  // namespace

const MlmSpmApi& spm_api() {
  static std::once_flag once;
  static const MlmSpmApi* api = nullptr;
  std::call_once(once, [] { api = open_bridge(); });
  return *api;
}

}  // namespace mlm::text

#pragma once
// What the fuzz targets (fuzz/*_fuzzer.cpp) share: a failed check that ends the process as a
// crash, and a scratch file per process for the readers that take a path.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace mlm::fuzz {

/// A broken invariant: printed and abort()ed, so libFuzzer (and the replay test) report it.
[[noreturn]] inline void fail(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", target, what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// $TMPDIR/mlm_<name>_<pid>: a file or directory this process alone writes.
inline std::string scratch_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/mlm_" + name + "_" + std::to_string(getpid());
}

/// Writes `bytes` to `path` (replacing it); a failure to write is the harness's own failure.
inline void write_bytes(const char* target, const std::string& path, std::string_view bytes) {
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) fail(target, "cannot write " + path);
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
    fail(target, "cannot write " + path);
  std::fclose(out);
}

}  // namespace mlm::fuzz

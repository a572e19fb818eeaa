#include "mlm/train/checkpoint/checkpoint_dir.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace fs = std::filesystem;

namespace mlm::train {
namespace {

constexpr const char* kManifest = "DONE";
constexpr const char* kTmpPrefix = ".tmp-";

void fsync_path(const fs::path& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) {
    throw CheckpointError("cannot open " + path.string() + " to sync it: " + std::strerror(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw CheckpointError("fsync of " + path.string() + " failed: " + std::strerror(err));
}

struct FileDigest {
  uint64_t bytes = 0;
  uint32_t crc32 = 0;
};

FileDigest digest_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot read " + path.string());
  FileDigest digest;
  uLong crc = ::crc32(0L, Z_NULL, 0);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    if (got <= 0) break;
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(got));
    digest.bytes += static_cast<uint64_t>(got);
  }
  if (in.bad()) throw CheckpointError("error while reading " + path.string());
  digest.crc32 = static_cast<uint32_t>(crc);
  return digest;
}

void remove_quietly(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

}  // namespace

std::string checkpoint_dir_name(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step_%08lld", static_cast<long long>(step));
  return name;
}

std::optional<int64_t> parse_checkpoint_step(const std::string& name) {
  if (name.rfind("step_", 0) != 0 || name.size() <= 5) return std::nullopt;
  int64_t step = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

void write_file_durably(const fs::path& path, const std::string& bytes) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw CheckpointError("cannot create " + path.string() + ": " + std::strerror(errno));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw CheckpointError("failed to write " + path.string() + ": " + std::strerror(errno));
  }
  fsync_path(path, /*directory=*/false);
}

std::string read_file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot read " + path.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CheckpointError("error while reading " + path.string());
  return bytes;
}

fs::path write_checkpoint_dir(const fs::path& checkpoints_dir, int64_t step,
                              const std::function<void(const fs::path& tmp_dir)>& write_files) {
  const std::string name = checkpoint_dir_name(step);
  const fs::path final_dir = checkpoints_dir / name;
  const fs::path tmp_dir = checkpoints_dir / (kTmpPrefix + name);
  try {
    fs::create_directories(checkpoints_dir);
    remove_quietly(tmp_dir);
    fs::create_directories(tmp_dir);
    write_files(tmp_dir);

    nlohmann::json manifest;
    manifest["format"] = 1;
    manifest["step"] = step;
    auto& files = manifest["files"];
    files = nlohmann::json::object();
    std::vector<fs::path> written;
    for (const auto& entry : fs::directory_iterator(tmp_dir)) written.push_back(entry.path());
    std::sort(written.begin(), written.end());
    for (const auto& path : written) {
      if (!fs::is_regular_file(path)) continue;
      fsync_path(path, /*directory=*/false);
      const auto digest = digest_file(path);
      files[path.filename().string()] = {{"bytes", digest.bytes}, {"crc32", digest.crc32}};
    }
    write_file_durably(tmp_dir / kManifest, manifest.dump(2) + "\n");
    fsync_path(tmp_dir, /*directory=*/true);

    // Move an older directory of the same step aside first: rename() cannot replace a
    // non-empty directory, and the old one must survive until the new one is in place.
    const fs::path old_dir = checkpoints_dir / (std::string(kTmpPrefix) + "old-" + name);
    const bool had_old = fs::exists(final_dir);
    if (had_old) {
      remove_quietly(old_dir);
      fs::rename(final_dir, old_dir);
    }
    fs::rename(tmp_dir, final_dir);
    fsync_path(checkpoints_dir, /*directory=*/true);
    if (had_old) remove_quietly(old_dir);
  } catch (const CheckpointError& e) {
    remove_quietly(tmp_dir);
    throw CheckpointError("writing checkpoint " + final_dir.string() + " failed: " + e.what());
  } catch (const std::exception& e) {
    remove_quietly(tmp_dir);
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    throw CheckpointError("writing checkpoint " + final_dir.string() + " failed: " + what);
  }
  return final_dir;
}

void verify_checkpoint_dir(const fs::path& dir, const std::vector<std::string>& required) {
  if (!fs::is_directory(dir)) throw CheckpointError(dir.string() + ": not a checkpoint directory");
  const fs::path manifest_path = dir / kManifest;
  if (!fs::exists(manifest_path)) {
    throw CheckpointError(manifest_path.string() +
                          " is missing: the checkpoint was not completely written");
  }
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(read_file_bytes(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(manifest_path.string() + " is not valid JSON: " + e.what());
  }
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) {
    throw CheckpointError(manifest_path.string() + " has no \"files\" table");
  }
  const auto& files = manifest["files"];
  for (const auto& name : required) {
    if (!files.contains(name)) {
      throw CheckpointError((dir / name).string() + " is not part of the checkpoint (not in DONE)");
    }
  }
  for (const auto& [name, expected] : files.items()) {
    const fs::path path = dir / name;
    if (!fs::exists(path)) throw CheckpointError(path.string() + " is missing");
    uint64_t want_bytes = 0;
    uint32_t want_crc = 0;
    try {
      want_bytes = expected.at("bytes").get<uint64_t>();
      want_crc = expected.at("crc32").get<uint32_t>();
    } catch (const nlohmann::json::exception& e) {
      throw CheckpointError(manifest_path.string() + ": bad entry for " + name + ": " + e.what());
    }
    const auto got_bytes = static_cast<uint64_t>(fs::file_size(path));
    if (got_bytes != want_bytes) {
      throw CheckpointError(path.string() + " is truncated or was modified: " +
                            std::to_string(got_bytes) + " bytes, DONE says " +
                            std::to_string(want_bytes));
    }
    if (digest_file(path).crc32 != want_crc) {
      throw CheckpointError(path.string() + " is corrupted: its CRC-32 does not match DONE");
    }
  }
}

std::optional<fs::path> find_latest_checkpoint(const fs::path& checkpoints_dir,
                                               const std::vector<std::string>& required) {
  std::vector<std::pair<int64_t, fs::path>> candidates;
  std::error_code ec;
  if (!fs::is_directory(checkpoints_dir, ec)) return std::nullopt;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir, ec)) {
    const auto step = parse_checkpoint_step(entry.path().filename().string());
    if (step && entry.is_directory()) candidates.emplace_back(*step, entry.path());
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  // Newest first, verifying only until one passes (verification reads every byte).
  for (const auto& [step, path] : candidates) {
    try {
      verify_checkpoint_dir(path, required);
      return path;
    } catch (const CheckpointError& e) {
      log::warn("ckpt", "skipping {}: {}", path.string(), e.what());
    }
  }
  return std::nullopt;
}

void prune_checkpoints(const fs::path& checkpoints_dir, int64_t keep_last,
                       const std::vector<std::string>& required) {
  std::error_code ec;
  if (!fs::is_directory(checkpoints_dir, ec)) return;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir, ec)) {
    if (entry.path().filename().string().rfind(kTmpPrefix, 0) == 0) remove_quietly(entry.path());
  }
  if (keep_last <= 0) return;
  // Count by name order (steps) and only the newest keep_last complete ones survive; an
  // incomplete directory older than them is garbage as well.
  std::vector<std::pair<int64_t, fs::path>> all;
  for (const auto& entry : fs::directory_iterator(checkpoints_dir, ec)) {
    const auto step = parse_checkpoint_step(entry.path().filename().string());
    if (step && entry.is_directory()) all.emplace_back(*step, entry.path());
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  int64_t kept = 0;
  for (const auto& [step, path] : all) {
    if (kept < keep_last) {
      // Cheap completeness test here (DONE present); full verification is for loading.
      if (fs::exists(path / kManifest)) ++kept;
      continue;
    }
    log::debug("ckpt", "pruning {}", path.string());
    remove_quietly(path);
  }
}

}  // namespace mlm::train

#include "mlm/train/checkpoint/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::train {
namespace {

namespace fs = std::filesystem;

fs::path lock_path(const fs::path& output_dir) { return output_dir / ".lock"; }

std::string holder_json() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  char since[64] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return nlohmann::json{{"host", host}, {"pid", static_cast<int64_t>(getpid())}, {"since", since}}
             .dump() + "\n";
}

/// "host myhost, pid 1234, since 2026-11-30 16:58:17 UTC": what the lock file says.
std::string describe_holder(const fs::path& output_dir) {
  std::ifstream in(lock_path(output_dir));
  const auto json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return "a process that has not written its name yet";
  return "host " + json.value("host", std::string("?")) + ", pid " +
         std::to_string(json.value("pid", int64_t{-1})) + ", since " +
         json.value("since", std::string("?"));
}

}  // namespace

RunLock::RunLock(const fs::path& output_dir) {
  fs::create_directories(output_dir);
  const fs::path path = lock_path(output_dir);
  // No O_TRUNC: the file names the current holder until the lock is ours.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw UsageError("train.output_dir " + output_dir.string() + ": cannot create " +
                     path.string() + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      ::close(fd);
      throw UsageError("train.output_dir " + output_dir.string() +
                       " is in use by another mlm-train (" + describe_holder(output_dir) +
                       "); wait for it to end, or choose another train.output_dir");
    }
    // ENOLCK, EOPNOTSUPP, ...: a file system without locks. Refusing would make such mounts
    // unusable; say plainly what is not protected.
    ::close(fd);
    log::warn("train", "cannot lock {} ({}): nothing stops a second mlm-train from writing to "
              "this directory at the same time", path.string(), std::strerror(error));
    return;
  }
  fd_ = fd;
  const std::string holder = holder_json();
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
    log::warn("train", "cannot write the holder into {}: {}", path.string(), std::strerror(errno));
  }
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (harmless, reused)
}

}  // namespace mlm::train

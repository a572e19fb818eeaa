#pragma once
// One writer per run directory. mlm-train holds an exclusive flock(2) on
// <train.output_dir>/.lock for its whole life; the kernel drops the lock when the process
// exits or dies, so a killed run never leaves a stale lock behind. The file names the holder
// (host, pid, start time) for the error a second writer gets. Readers (mlm-eval, mlm-export)
// take no lock. On a file system without working locks (some network mounts) the run goes on
// unprotected, with a warning: see docs/RELIABILITY.md.
#include <filesystem>

namespace mlm::train {

class RunLock {
 public:
  /// Creates `output_dir` when missing and takes its lock. UsageError naming the holder when
  /// another process holds it.
  explicit RunLock(const std::filesystem::path& output_dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  /// Whether the lock is held (false where the file system refused to lock).
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace mlm::train

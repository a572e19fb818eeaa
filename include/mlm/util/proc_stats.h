#pragma once
// This process's I/O and memory as Linux reports them (/proc/self), for the data benchmarks:
// how many bytes a rank reads from a prepared store, and its peak resident memory. Fields are
// -1 where the kernel does not report them.
#include <cstdint>
#include <string>

namespace mlm {

struct ProcessIo {
  int64_t rchar = -1;       // bytes passed to read()-like calls (page cache hits included)
  int64_t read_bytes = -1;  // bytes the process caused to be fetched from storage
};

ProcessIo process_io();

/// VmHWM: the peak resident set size, in bytes.
int64_t peak_rss_bytes();

/// Resident bytes of this process's file mappings whose path starts with `prefix`: the pages
/// of those files this process has touched (and the kernel mapped around them).
int64_t mapped_resident_bytes(const std::string& prefix);

}  // namespace mlm

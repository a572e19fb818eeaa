#include "mlm/util/proc_stats.h"

#include <fstream>
#include <sstream>

namespace mlm {

ProcessIo process_io() {
  ProcessIo io;
  std::ifstream in("/proc/self/io");
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "rchar:") io.rchar = value;
    if (key == "read_bytes:") io.read_bytes = value;
  }
  return io;
}

int64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // in kB
  }
  return -1;
}

int64_t mapped_resident_bytes(const std::string& prefix) {
  std::ifstream in("/proc/self/smaps");
  if (!in) return -1;
  std::string line;
  bool counting = false;
  int64_t total = 0;
  while (std::getline(in, line)) {
    // A mapping's header line starts with its address range "lo-hi perms ..."; the path, if
    // any, is the sixth field. Its "Rss:" line follows among the key: value lines.
    const auto colon = line.find(':');
    const bool is_field = colon != std::string::npos && line.find(' ') > colon;
    if (!is_field) {
      std::istringstream fields(line);
      std::string range, perms, offset, dev, inode, path;
      fields >> range >> perms >> offset >> dev >> inode >> path;
      counting = !prefix.empty() && path.rfind(prefix, 0) == 0;
    } else if (counting && line.rfind("Rss:", 0) == 0) {
      total += std::stoll(line.substr(4)) * 1024;
    }
  }
  return total;
}

}  // namespace mlm

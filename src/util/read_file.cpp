#include "mlm/util/read_file.h"

#include <fstream>
#include <sstream>

namespace mlm {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace mlm

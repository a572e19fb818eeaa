#include "mlm/util/atomic_file.h"

#include <fstream>

#include "mlm/util/errors.h"

namespace mlm {

void write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  std::error_code ec;
  if (out) std::filesystem::rename(tmp, path, ec);
  if (!out || ec) {
    std::filesystem::remove(tmp, ec);
    throw CheckpointError(path.string() + ": cannot write");
  }
}

}  // namespace mlm

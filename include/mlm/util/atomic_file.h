#pragma once
// Writing a small output file whole or not at all: a reader (or a later run) never sees half
// of it, whatever kills the writer.
#include <filesystem>
#include <string_view>

namespace mlm {

/// Writes `bytes` to `path` through `path`.tmp renamed into place. CheckpointError naming
/// `path` when it cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace mlm

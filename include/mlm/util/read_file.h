#pragma once
// A small input file read whole (a tokenizer model, a vocabulary): its bytes, or nothing when
// it cannot be opened, so each caller names the file in its own kind of error.
#include <filesystem>
#include <optional>
#include <string>

namespace mlm {

std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace mlm

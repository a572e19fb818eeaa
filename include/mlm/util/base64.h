#pragma once
// Standard base64 (RFC 4648, with '=' padding), for binary blobs inside JSON files.
#include <optional>
#include <string>
#include <string_view>

namespace mlm {

std::string base64_encode(std::string_view bytes);
/// The bytes of standard base64 text (padding optional); nothing when it is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace mlm

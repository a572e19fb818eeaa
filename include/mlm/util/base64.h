#pragma once
// Standard base64 (RFC 4648, with '=' padding), for binary blobs inside JSON files.
#include <string>
#include <string_view>

namespace mlm {

std::string base64_encode(std::string_view bytes);

}  // namespace mlm

#pragma once
// UTF-8 validation, shared by the text stage (which repairs corpus text) and the weight-file
// readers (which refuse a key that is not text).
#include <cstddef>
#include <string_view>

namespace mlm {

/// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is invalid (bad lead
/// byte, truncated or overlong sequence, surrogate, code point above U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t i);

/// The offset of the first invalid sequence, or text.size() when the whole text is valid.
size_t utf8_valid_prefix(std::string_view text);

}  // namespace mlm

#pragma once
// The character classes the Rust crates behind tokenizers ask about, answered from ICU, and
// the one UTF-8 decoder (mlm/util/utf8_decode.h) the hf room steps with. Internal to the hf room.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mlm/text/utf8.h"
#include "mlm/util/utf8_decode.h"

namespace mlm::text::hf {

/// Rust's char::is_whitespace (Unicode White_Space).
bool is_rust_whitespace(char32_t c);
/// Rust's char::is_numeric: general category Nd, Nl or No.
bool is_rust_numeric(char32_t c);
/// Rust's char::is_alphanumeric: Alphabetic or numeric.
bool is_rust_alphanumeric(char32_t c);
/// General category M (Mn, Mc, Me): what StripAccents drops.
bool is_mark(char32_t c);
/// The regex crate's \w: Alphabetic, M, Nd, Pc, Join_Control (added tokens' single_word).
bool is_regex_word_char(char32_t c);

}  // namespace mlm::text::hf

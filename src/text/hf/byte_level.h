#pragma once
// GPT-2's byte ↔ character map (ByteLevel pre-tokenizer and decoder): every byte becomes a
// printable character so that byte-level pieces are valid strings ("Ġ" is the space).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mlm::text::hf {

/// The UTF-8 of the character byte b maps to (1 or 2 bytes).
const std::array<std::string, 256>& byte_level_chars();
/// Appends the byte-level form of `text` (each byte as its character) to `out`.
void append_byte_level(std::string_view text, std::string& out);
/// The byte a byte-level character stands for, if it is one.
std::optional<uint8_t> byte_of_char(char32_t c);

}  // namespace mlm::text::hf

#pragma once
// What BertNormalizer and BertPreTokenizer (Hugging Face tokenizers) ask of one code point,
// answered from ICU as the Rust crates behind them answer it. Internal to WordPiece.
//
// Where the answers come from in tokenizers: whitespace and lower case from Rust's std
// (current Unicode); the categories (punctuation, nonspacing mark, "other") from the
// unicode_categories crate, whose tables are Unicode 8.0 — so a code point assigned later
// has no category there, and a few older ones still have their 8.0 category. The NFD data
// is as old (see bert_chars.cpp).
#include <cstdint>

namespace mlm::text::bert {

enum CharFlag : uint8_t {
  kRemoved = 1,       // dropped by clean_text
  kWhitespace = 2,    // a word boundary; clean_text maps it to ' '
  kPunctuation = 4,   // a word of its own
  kCjk = 8,           // spaces around it (handle_chinese_chars)
  kNonspacing = 16,   // Mn: dropped by strip_accents
  kDecomposes = 32,   // has a canonical decomposition (NFD changes it)
  kCombining = 64,    // canonical combining class > 0: NFD may reorder it
  kLowerDiffers = 128,
};

/// The CharFlag bits of `c` (a table lookup for most code points).
uint8_t flags(char32_t c);

/// Removed by clean_text: U+0000, U+FFFD and the "other" categories (Cc, Cf, Co, Cs; not
/// unassigned Cn) except tab, newline and carriage return, which count as whitespace.
bool is_removed_by_clean_text(char32_t c);
/// Unicode White_Space (Rust's char::is_whitespace), tab, newline and return included.
bool is_whitespace(char32_t c);
/// ASCII 33–47, 58–64, 91–96, 123–126, or a Unicode punctuation category (Pc Pd Ps Pe Pi
/// Pf Po): BertPreTokenizer makes each one a word of its own.
bool is_punctuation(char32_t c);
/// The CJK ideograph blocks BertNormalizer puts spaces around (handle_chinese_chars).
bool is_cjk_ideograph(char32_t c);
/// General category Mn: dropped by strip_accents after NFD.
bool is_nonspacing_mark(char32_t c);
/// Canonical combining class (0 for starters): NFD orders marks by it.
uint8_t combining_class(char32_t c);

/// Writes the full canonical decomposition (NFD) of `c` to `out` (room for kMaxDecomposition)
/// and returns its length (1 and `c` itself when it has none).
inline constexpr int kMaxDecomposition = 8;
int decompose(char32_t c, char32_t* out);

/// Writes the full lower-case mapping of `c` (Rust's char::to_lowercase: the unconditional
/// one, so 'İ' → "i̇" and 'Σ' → 'σ' anywhere) to `out` (room for 3); returns its length.
int to_lower(char32_t c, char32_t* out);

}  // namespace mlm::text::bert

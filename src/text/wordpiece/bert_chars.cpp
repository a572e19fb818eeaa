#include "bert_chars.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <array>
#include <memory>
#include <stdexcept>
#include <string>

namespace mlm::text::bert {
namespace {

// The Unicode version of the unicode_categories crate's tables (see the header). The NFD
// tables of tokenizers (unicode-normalization-alignments) are old too: U+11938 (Unicode 13)
// does not decompose there; code points newer than 8.0 get no decomposition and combining
// class 0, which agrees with tokenizers on every code point ICU knows.
constexpr uint8_t kTablesMajorVersion = 8;

// Code points whose general category changed after Unicode 8.0, with their 8.0 category.
struct OldCategory {
  char32_t c;
  UCharCategory category;
};
constexpr OldCategory kOldCategories[] = {
    {0x166D, U_OTHER_PUNCTUATION},       // CANADIAN SYLLABICS CHI SIGN, now So
    {0x1734, U_NON_SPACING_MARK},        // HANUNOO SIGN PAMUDPOD, now Mc
    {0x1885, U_OTHER_LETTER},            // MONGOLIAN LETTER ALI GALI BALUDA, now Mn
    {0x1886, U_OTHER_LETTER},            // MONGOLIAN LETTER ALI GALI THREE BALUDA, now Mn
    {0xA9BD, U_COMBINING_SPACING_MARK},  // JAVANESE CONSONANT SIGN KERET, now Mn
    {0x111C9, U_OTHER_PUNCTUATION},      // SHARADA SANDHI MARK, now Mn
};

bool newer_than_tables(char32_t c) {
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] > kTablesMajorVersion;
}

// The category the unicode_categories crate gives `c`: unassigned for anything newer.
UCharCategory category_of(char32_t c) {
  for (const auto& old : kOldCategories) {
    if (old.c == c) return old.category;
  }
  if (newer_than_tables(c)) return U_UNASSIGNED;
  return static_cast<UCharCategory>(u_charType(static_cast<UChar32>(c)));
}

// Lower-case mappings of letters added in Unicode 16, which Rust's std knows and ICU 72
// (Unicode 15) does not: {first, last, offset to the lower-case letter}.
struct LowerRange {
  char32_t first, last;
  int32_t offset;
};
constexpr LowerRange kNewerLowerCase[] = {
    {0x1C89, 0x1C89, 1},          {0xA7CB, 0xA7CB, 0x264 - 0xA7CB}, {0xA7CC, 0xA7CC, 1},
    {0xA7CE, 0xA7CE, 1},          {0xA7D2, 0xA7D2, 1},              {0xA7D4, 0xA7D4, 1},
    {0xA7DA, 0xA7DA, 1},          {0xA7DC, 0xA7DC, 0x19B - 0xA7DC}, {0x10D50, 0x10D65, 0x20},
    {0x16EA0, 0x16EB8, 0x1B},
};

const icu::Normalizer2& nfd() {
  static const icu::Normalizer2* instance = [] {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = icu::Normalizer2::getNFDInstance(status);
    if (U_FAILURE(status)) {
      throw std::runtime_error(std::string("ICU: no NFD data: ") + u_errorName(status));
    }
    return n;
  }();
  return *instance;
}

uint8_t compute_flags(char32_t c) {
  uint8_t f = 0;
  if (is_removed_by_clean_text(c)) f |= kRemoved;
  if (is_whitespace(c)) f |= kWhitespace;
  if (is_punctuation(c)) f |= kPunctuation;
  if (is_cjk_ideograph(c)) f |= kCjk;
  if (is_nonspacing_mark(c)) f |= kNonspacing;
  char32_t buffer[kMaxDecomposition];
  if (decompose(c, buffer) != 1 || buffer[0] != c) f |= kDecomposes;
  if (combining_class(c) != 0) f |= kCombining;
  if (to_lower(c, buffer) != 1 || buffer[0] != c) f |= kLowerDiffers;
  return f;
}

// Planes 0-2 hold nearly all text; higher code points are answered directly.
constexpr char32_t kTableSize = 0x30000;

}  // namespace

uint8_t flags(char32_t c) {
  static const std::unique_ptr<std::array<uint8_t, kTableSize>> table = [] {
    auto t = std::make_unique<std::array<uint8_t, kTableSize>>();
    for (char32_t x = 0; x < kTableSize; ++x) (*t)[x] = compute_flags(x);
    return t;
  }();
  return c < kTableSize ? (*table)[c] : compute_flags(c);
}

bool is_removed_by_clean_text(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  if (c == 0 || c == 0xFFFD) return true;
  switch (category_of(c)) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool is_whitespace(char32_t c) { return u_isUWhiteSpace(static_cast<UChar32>(c)); }

bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  return (U_MASK(category_of(c)) & U_GC_P_MASK) != 0;
}

bool is_cjk_ideograph(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_nonspacing_mark(char32_t c) { return category_of(c) == U_NON_SPACING_MARK; }

uint8_t combining_class(char32_t c) {
  return newer_than_tables(c) ? 0 : u_getCombiningClass(static_cast<UChar32>(c));
}

int decompose(char32_t c, char32_t* out) {
  icu::UnicodeString mapping;
  if (newer_than_tables(c) || !nfd().getDecomposition(static_cast<UChar32>(c), mapping)) {
    out[0] = c;
    return 1;
  }
  int n = 0;
  for (int32_t i = 0; i < mapping.length() && n < kMaxDecomposition;) {
    const UChar32 x = mapping.char32At(i);
    out[n++] = static_cast<char32_t>(x);
    i += U16_LENGTH(x);
  }
  return n;
}

int to_lower(char32_t c, char32_t* out) {
  if (c == 0x130) {  // the one unconditional multi-character lower-case mapping
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = static_cast<char32_t>(u_tolower(static_cast<UChar32>(c)));
  if (out[0] == c) {
    for (const auto& range : kNewerLowerCase) {
      if (c >= range.first && c <= range.last) out[0] = static_cast<char32_t>(c + range.offset);
    }
  }
  return 1;
}

}  // namespace mlm::text::bert

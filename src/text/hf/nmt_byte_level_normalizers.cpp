// Two normalizers of tokenizers (tokenizers/src/normalizers/unicode.rs, byte_level.rs): Nmt,
// sentencepiece's control-character clean-up (first in SentencePieceUnigramTokenizer's
// sequence), and ByteLevel, every byte as GPT-2's printable character.
#include "byte_level.h"
#include "components.h"
#include "unicode_chars.h"

namespace mlm::text::hf {
namespace nmt_byte_level_detail {

// Nmt drops these control characters...
bool nmt_drops(char32_t c) {
  return (c >= 0x01 && c <= 0x08) || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || c == 0x8F || c == 0x9F;
}

// ...and reads these as a space.
bool nmt_spaces(char32_t c) {
  return c == 0x09 || c == 0x0A || c == 0x0C || c == 0x0D || c == 0x1680 || (c >= 0x200B && c <= 0x200F) ||
         c == 0x2028 || c == 0x2029 || c == 0x2581 || c == 0xFEFF || c == 0xFFFD;
}

class Nmt : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      const size_t begin = i;
      const char32_t c = next_code_point(text, i);
      if (nmt_drops(c)) continue;
      if (nmt_spaces(c)) {
        out += ' ';
      } else {
        out.append(text, begin, i - begin);
      }
    }
    text.swap(out);
  }
};

class ByteLevelNormalizer : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size() * 2);
    append_byte_level(text, out);
    text.swap(out);
  }
};

}  // namespace nmt_byte_level_detail

std::unique_ptr<Normalizer> make_nmt(const JsonReader&) { return std::make_unique<nmt_byte_level_detail::Nmt>(); }

std::unique_ptr<Normalizer> make_byte_level_normalizer(const JsonReader&) {
  return std::make_unique<nmt_byte_level_detail::ByteLevelNormalizer>();
}

}  // namespace mlm::text::hf

// tokenizers' UnicodeScripts pre-tokenizer (tokenizers/src/pre_tokenizers/unicode_scripts/):
// a new pre-token where the script changes, as sentencepiece's IsValidSentencePiece sees
// scripts: Hiragana, Katakana and U+30FC count as Han, and a space belongs to every script
// (it neither splits nor changes the script in force).
#include <unicode/uchar.h>
#include <unicode/uscript.h>

#include "components.h"
#include "unicode_chars.h"

namespace mlm::text::hf {
namespace unicode_scripts_detail {

constexpr int kAnyScript = -1;

// The library's script table was generated from Unicode 9.0's Scripts.txt; a character
// assigned later is in no range of it, which the library reads as Any. ICU answers for
// Unicode 9.0 characters as that table does.
int script_of(char32_t c) {
  if (c == 0x30FC) return USCRIPT_HAN;
  if (c == ' ') return kAnyScript;
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  if (age[0] == 0 || age[0] > 9) return kAnyScript;  // unassigned in 9.0
  UErrorCode status = U_ZERO_ERROR;
  const UScriptCode script = uscript_getScript(static_cast<UChar32>(c), &status);
  if (U_FAILURE(status) || script == USCRIPT_UNKNOWN) return kAnyScript;
  if (script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA) return USCRIPT_HAN;
  return script;
}

class UnicodeScripts : public PreTokenizer {
 public:
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    // A cut before each character whose script is not Any and differs from the last script
    // that was not Any. The first such character cuts too: the library's first range begins
    // there, so Any characters before it are dropped (and a text of spaces gives nothing).
    std::optional<size_t> begin;
    int last = kAnyScript - 1;  // no script yet
    for (size_t i = 0; i < text.size();) {
      const size_t at = i;
      const int script = script_of(next_code_point(text, i));
      if (script == kAnyScript) continue;
      if (script != last) {
        if (begin) out.add(text.substr(*begin, at - *begin), at_text_start && *begin == 0);
        begin = at;
      }
      last = script;
    }
    if (begin) out.add(text.substr(*begin), at_text_start && *begin == 0);
  }
};

}  // namespace unicode_scripts_detail

std::unique_ptr<PreTokenizer> make_unicode_scripts(const JsonReader&) {
  return std::make_unique<unicode_scripts_detail::UnicodeScripts>();
}

}  // namespace mlm::text::hf

// tokenizers' FixedLength pre-tokenizer (tokenizers/src/pre_tokenizers/fixed_length.rs):
// pre-tokens of `length` characters each, the last one shorter.
#include <climits>

#include "components.h"
#include "unicode_chars.h"

namespace mlm::text::hf {
namespace fixed_length_detail {

class FixedLength : public PreTokenizer {
 public:
  explicit FixedLength(size_t length) : length_(length) {}
  void split(std::string_view text, bool at_text_start, Pieces& out) const override {
    size_t begin = 0, chars = 0;
    for (size_t i = 0; i < text.size();) {
      next_code_point(text, i);
      if (++chars == length_) {
        out.add(text.substr(begin, i - begin), at_text_start && begin == 0);
        begin = i;
        chars = 0;
      }
    }
    out.add(text.substr(begin), at_text_start && begin == 0);
  }

 private:
  size_t length_;
};

}  // namespace fixed_length_detail

std::unique_ptr<PreTokenizer> make_fixed_length(const JsonReader& json) {
  const int64_t length = json.has("length") ? json.integer("length") : 5;
  // 0 makes the library fail on every text; past 2^31 no text is that long.
  if (length < 1 || length > INT32_MAX) json.fail("expected a length from 1 to 2147483647", "length");
  return std::make_unique<fixed_length_detail::FixedLength>(static_cast<size_t>(length));
}

}  // namespace mlm::text::hf

#include "mlm/util/utf8_decode.h"

namespace mlm {

size_t utf8_valid_prefix(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = decode_utf8(text, i).length;
    if (length == 0) break;
    i += length;
  }
  return i;
}

}  // namespace mlm

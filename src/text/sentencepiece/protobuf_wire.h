#pragma once
// A reader of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/):
// enough to walk a message field by field without generated code.
#include <cstdint>
#include <string>
#include <string_view>

namespace mlm::text {

struct WireField {
  size_t offset = 0;       // of the field's key in the outermost message
  uint32_t number = 0;
  uint32_t wire_type = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t varint = 0;     // wire type 0
  uint32_t fixed32 = 0;    // wire type 5
  std::string_view bytes;  // wire type 2 (a string, bytes or nested message)
  size_t bytes_offset = 0; // where `bytes` starts in the outermost message
};

class WireReader {
 public:
  /// `base` is the offset of `message` in the outermost message (for error messages).
  WireReader(std::string_view message, const std::string& origin, size_t base = 0)
      : message_(message), origin_(origin), base_(base) {}

  /// The next field, or false at the end. DataError on malformed bytes.
  bool next(WireField& field);

  /// A reader over a nested message field.
  WireReader nested(const WireField& field) const {
    return WireReader(field.bytes, origin_, field.bytes_offset);
  }

  /// DataError "<origin>: malformed sentencepiece model at byte N: <what>".
  [[noreturn]] void fail(size_t offset, const std::string& what) const;

 private:
  uint64_t read_varint();

  std::string_view message_;
  const std::string& origin_;
  size_t base_;
  size_t pos_ = 0;
};

}  // namespace mlm::text

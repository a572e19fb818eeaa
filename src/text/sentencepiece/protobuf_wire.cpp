#include "protobuf_wire.h"

#include "mlm/util/errors.h"

namespace mlm::text {

void WireReader::fail(size_t offset, const std::string& what) const {
  throw DataError(origin_ + ": malformed sentencepiece model at byte " + std::to_string(offset) +
                  ": " + what);
}

uint64_t WireReader::read_varint() {
  const size_t start = pos_;
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= message_.size()) fail(base_ + start, "truncated varint");
    const auto byte = static_cast<uint8_t>(message_[pos_++]);
    value |= uint64_t(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  fail(base_ + start, "varint longer than 10 bytes");
}

bool WireReader::next(WireField& field) {
  if (pos_ >= message_.size()) return false;
  const size_t start = pos_;
  const uint64_t key = read_varint();
  field.offset = base_ + start;
  field.number = static_cast<uint32_t>(key >> 3);
  field.wire_type = static_cast<uint32_t>(key & 7);
  if (field.number == 0) fail(base_ + start, "field number 0");
  switch (field.wire_type) {
    case 0:
      field.varint = read_varint();
      return true;
    case 1:
      if (message_.size() - pos_ < 8) fail(base_ + pos_, "truncated fixed64 field");
      pos_ += 8;
      return true;
    case 2: {
      const size_t length_at = pos_;
      const uint64_t length = read_varint();
      if (length > message_.size() - pos_) {
        fail(base_ + length_at, "field " + std::to_string(field.number) + " of " +
                                    std::to_string(length) + " bytes runs past the end");
      }
      field.bytes = message_.substr(pos_, length);
      field.bytes_offset = base_ + pos_;
      pos_ += length;
      return true;
    }
    case 5:
      if (message_.size() - pos_ < 4) fail(base_ + pos_, "truncated fixed32 field");
      field.fixed32 = 0;
      for (int i = 3; i >= 0; --i) {  // little-endian
        field.fixed32 = (field.fixed32 << 8) | static_cast<uint8_t>(message_[pos_ + i]);
      }
      pos_ += 4;
      return true;
    default:
      fail(base_ + start, "unsupported wire type " + std::to_string(field.wire_type) +
                              " (field " + std::to_string(field.number) + ")");
  }
}

}  // namespace mlm::text

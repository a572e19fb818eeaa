#include "mlm/train/run/event_file.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "mlm/util/crc32c.h"

namespace mlm::train {
namespace {

// Protocol-buffer wire types.
constexpr uint32_t kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5;

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_key(std::string& out, uint32_t field, uint32_t wire_type) { put_varint(out, (field << 3) | wire_type); }

template <class T>
void put_little_endian(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // the project's targets are little-endian
  out.append(bytes, sizeof(T));
}

void put_bytes(std::string& out, uint32_t field, const std::string& bytes) {
  put_key(out, field, kBytes);
  put_varint(out, bytes.size());
  out += bytes;
}

std::string event_head(double wall_time, int64_t step) {
  std::string event;
  put_key(event, 1, kFixed64);
  put_little_endian(event, wall_time);
  if (step != 0) {
    put_key(event, 2, kVarint);
    put_varint(event, static_cast<uint64_t>(step));
  }
  return event;
}

bool get_varint(const std::string& in, size_t& at, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && at < in.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in[at++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

}  // namespace

std::string version_event(double wall_time) {
  auto event = event_head(wall_time, 0);
  put_bytes(event, 3, "brain.Event:2");
  return event;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<Scalar>& scalars) {
  std::string summary;
  for (const auto& scalar : scalars) {
    std::string value;
    put_bytes(value, 1, scalar.tag);
    put_key(value, 2, kFixed32);
    put_little_endian(value, scalar.value);
    put_bytes(summary, 1, value);
  }
  auto event = event_head(wall_time, step);
  put_bytes(event, 5, summary);
  return event;
}

int64_t event_step(const std::string& event) {
  size_t at = 0;
  while (at < event.size()) {
    uint64_t key = 0, value = 0;
    if (!get_varint(event, at, key)) return 0;
    switch (key & 7) {
      case kVarint:
        if (!get_varint(event, at, value)) return 0;
        if ((key >> 3) == 2) return static_cast<int64_t>(value);
        break;
      case kFixed64: at += 8; break;
      case kFixed32: at += 4; break;
      case kBytes:
        if (!get_varint(event, at, value)) return 0;
        at += value;
        break;
      default: return 0;
    }
  }
  return 0;
}

std::string framed_record(const std::string& record) {
  std::string out;
  std::string length;
  put_little_endian(length, static_cast<uint64_t>(record.size()));
  out += length;
  put_little_endian(out, masked_crc32c(length));
  out += record;
  put_little_endian(out, masked_crc32c(record));
  return out;
}

std::vector<std::string> read_records(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  size_t at = 0;
  auto read_u32 = [&](size_t offset) {
    uint32_t v = 0;
    std::memcpy(&v, bytes.data() + offset, 4);
    return v;
  };
  while (at + 12 <= bytes.size()) {
    uint64_t length = 0;
    std::memcpy(&length, bytes.data() + at, 8);
    if (read_u32(at + 8) != masked_crc32c(std::string_view(bytes.data() + at, 8))) break;
    if (length > bytes.size() - at - 12 || bytes.size() - at - 12 - length < 4) break;
    const std::string record = bytes.substr(at + 12, length);
    if (read_u32(at + 12 + length) != masked_crc32c(record)) break;
    records.push_back(record);
    at += 12 + length + 4;
  }
  return records;
}

}  // namespace mlm::train

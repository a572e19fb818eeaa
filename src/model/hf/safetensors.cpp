#include "mlm/model/hf/safetensors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "mlm/util/errors.h"

namespace mlm::model {
namespace {

// The safetensors library refuses larger headers; so does this reader, before allocating.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct DtypeName {
  const char* name;
  c10::ScalarType type;
};
constexpr DtypeName kDtypes[] = {
    {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16},
    {"BF16", torch::kBFloat16}, {"I64", torch::kInt64}, {"I32", torch::kInt32},
    {"I16", torch::kInt16},   {"I8", torch::kInt8},     {"U8", torch::kUInt8},
    {"BOOL", torch::kBool}};

bool dtype_of(const std::string& name, c10::ScalarType& out) {
  for (const auto& d : kDtypes)
    if (name == d.name) return out = d.type, true;
  return false;
}

const char* name_of(c10::ScalarType type) {
  for (const auto& d : kDtypes)
    if (type == d.type) return d.name;
  throw CheckpointError(fmt::format("safetensors: cannot store dtype {}", c10::toString(type)));
}

uint64_t read_u64_le(const unsigned char* b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

struct Entry {
  std::string name;
  c10::ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;  // within the data section
};

// One header entry, checked against the data section's size.
Entry parse_entry(const std::string& path, const std::string& name, const nlohmann::ordered_json& v,
                  uint64_t data_bytes) {
  auto bad = [&](const std::string& what) {
    return CheckpointError(fmt::format("{}: tensor '{}': {}", path, name, what));
  };
  if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
    throw bad("header entry lacks dtype, shape or data_offsets");
  Entry e{name, torch::kFloat32, {}, 0, 0};
  if (!v["dtype"].is_string() || !dtype_of(v["dtype"].get<std::string>(), e.dtype))
    throw bad("unsupported dtype " + v["dtype"].dump());
  // The sizes are checked before any product is formed: a size past int64 would be a negative
  // dimension to LibTorch, and a product that wraps around (2^32 x 2^32 = 0 elements) would
  // pass the byte count below and leave LibTorch to refuse the shape with its own exception.
  // The product of the nonzero sizes must fit in int64 too, as LibTorch's storage size does.
  if (!v["shape"].is_array()) throw bad("shape " + v["shape"].dump() + " is not a list of sizes");
  uint64_t numel = 1;
  int64_t nonzero = 1;
  for (const auto& d : v["shape"]) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
      throw bad("shape " + v["shape"].dump() + " is not a list of sizes");
    const int64_t size = d.get<int64_t>();
    if (size != 0 && __builtin_mul_overflow(nonzero, size, &nonzero))
      throw bad("shape " + v["shape"].dump() + " has more elements than a tensor can hold");
    e.shape.push_back(size);
    numel *= static_cast<uint64_t>(size);
  }
  if (numel > data_bytes) throw bad(fmt::format("shape {} holds more elements than the file's {} data bytes",
                                                v["shape"].dump(), data_bytes));
  const auto& offsets = v["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    throw bad("data_offsets " + offsets.dump() + " is not [begin, end]");
  e.begin = offsets[0].get<uint64_t>();
  e.end = offsets[1].get<uint64_t>();
  if (e.begin > e.end || e.end > data_bytes)
    throw bad(fmt::format("data_offsets [{}, {}] point outside the file's {} data bytes", e.begin,
                          e.end, data_bytes));
  const uint64_t expected = numel * c10::elementSize(e.dtype);
  if (e.end - e.begin != expected)
    throw bad(fmt::format("shape {} of {} needs {} bytes but data_offsets span {}", v["shape"].dump(),
                          v["dtype"].get<std::string>(), expected, e.end - e.begin));
  return e;
}

}  // namespace

SafetensorsFile::SafetensorsFile(std::string file) : path_(std::move(file)) {
  const auto& path = path_;
  std::error_code ec;
  const uint64_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) throw CheckpointError(path + ": cannot read: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  unsigned char length_bytes[8];
  if (!in || file_bytes < 8 || !in.read(reinterpret_cast<char*>(length_bytes), 8))
    throw CheckpointError(fmt::format("{}: truncated safetensors file ({} bytes, no header length)", path,
                                      file_bytes));
  const uint64_t header_bytes = read_u64_le(length_bytes);
  if (header_bytes > file_bytes - 8 || header_bytes > kMaxHeaderBytes)
    throw CheckpointError(fmt::format("{}: truncated safetensors header: it claims {} bytes but the file "
                                      "has {} after the length",
                                      path, header_bytes, file_bytes - 8));
  std::string header(header_bytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(header);
  } catch (const std::exception& e) {
    throw CheckpointError(path + ": safetensors header is not JSON: " + e.what());
  }
  if (!json.is_object()) throw CheckpointError(path + ": safetensors header is not a JSON object");

  data_start_ = 8 + header_bytes;
  const uint64_t data_bytes = file_bytes - data_start_;
  std::vector<Entry> entries;
  for (const auto& [name, value] : json.items())
    if (name != "__metadata__") entries.push_back(parse_entry(path, name, value, data_bytes));
  // In data order. An empty tensor at the offset where the next one starts holds no bytes of it:
  // by (begin, end), so it sorts first, and stably, so empty ones at one offset keep the
  // header's order (writers list tensors in data order).
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  for (size_t i = 1; i < entries.size(); ++i)
    if (entries[i].begin < entries[i - 1].end)
      throw CheckpointError(fmt::format("{}: tensors '{}' and '{}' overlap in the data section", path,
                                        entries[i - 1].name, entries[i].name));
  for (const auto& e : entries) tensors_.push_back({e.name, e.dtype, e.shape, e.begin, e.end});
}

torch::Tensor SafetensorsFile::read(const Info& info) const {
  std::ifstream in(path_, std::ios::binary);
  auto tensor = torch::empty(info.shape, torch::TensorOptions().dtype(info.dtype));
  in.seekg(static_cast<std::streamoff>(data_start_ + info.begin));
  if (!in || !in.read(static_cast<char*>(tensor.data_ptr()), static_cast<std::streamsize>(info.end - info.begin)))
    throw CheckpointError(fmt::format("{}: tensor '{}': cannot read its bytes", path_, info.name));
  return tensor;
}

TensorDict read_safetensors(const std::string& path) {
  const SafetensorsFile file(path);
  TensorDict out;
  for (const auto& info : file.tensors()) out.emplace_back(info.name, file.read(info));
  return out;
}

void write_safetensors(const std::string& path, const TensorDict& tensors) {
  std::vector<std::pair<std::string, torch::Tensor>> unique;
  std::vector<const c10::TensorImpl*> seen;
  for (const auto& [name, tensor] : tensors) {
    const auto* impl = tensor.unsafeGetTensorImpl();
    if (std::find(seen.begin(), seen.end(), impl) != seen.end()) continue;  // a tied alias
    seen.push_back(impl);
    unique.emplace_back(name, tensor.detach().to(torch::kCPU).contiguous());
  }
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const auto& [name, t] : unique) {
    const uint64_t bytes = t.numel() * t.element_size();
    header[name] = {{"dtype", name_of(t.scalar_type())}, {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(length), 8);
    out << text;
    for (const auto& [name, t] : unique)
      out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
    out.close();
    if (!out) {
      std::filesystem::remove(tmp);
      throw CheckpointError(tmp + ": cannot write weight file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw CheckpointError(path + ": cannot rename " + tmp + ": " + ec.message());
}

}  // namespace mlm::model

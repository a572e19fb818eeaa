// The torch.save reader on hostile files: sizes, strides and zip entry sizes that would wrap
// int64 or claim more than the file holds, and pickles that nest without end or refer to
// themselves. Each is one CheckpointError line naming the file and the record, before any
// allocation of the claimed size, and never a crash. The pickles are written opcode by opcode
// into the zip LibTorch's own writer produces, as torch.save would.
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "mlm/model/hf/tensor_file.h"
#include "mlm/util/errors.h"

// Named, not anonymous: the unity build compiles this file with the other model tests.
namespace mlm::model::tensor_file_bounds_test {
namespace fs = std::filesystem;

std::string temp_path() {
  return (fs::temp_directory_path() / ("mlm_tensor_file_bounds_" + std::to_string(::getpid()) + ".pt")).string();
}

// torch.save's zip: archive/data.pkl, archive/data/0 (`storage_bytes` bytes), archive/version.
std::string zip_bytes(const std::string& pickle, size_t storage_bytes) {
  std::string out;
  caffe2::serialize::PyTorchStreamWriter zip([&](const void* bytes, size_t n) {
    out.append(static_cast<const char*>(bytes), n);
    return n;
  });
  zip.writeRecord("data.pkl", pickle.data(), pickle.size());
  const std::vector<char> storage(storage_bytes, '\x01');
  zip.writeRecord("data/0", storage.data(), storage.size());
  zip.writeEndOfFile();
  return out;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The pickle opcodes a state dict is made of (protocol 2).
std::string text(const std::string& s) {  // SHORT_BINUNICODE
  std::string out = "\x8c";
  out += static_cast<char>(s.size());
  return out.append(s);
}
std::string global(const std::string& module, const std::string& name) { return "c" + module + "\n" + name + "\n"; }
std::string int64(int64_t v) {  // LONG1 with 8 bytes, little endian
  std::string out = "\x8a\x08";
  for (int k = 0; k < 8; ++k) out += static_cast<char>(static_cast<uint64_t>(v) >> (8 * k));
  return out;
}
std::string tuple(const std::vector<int64_t>& values) {
  std::string out = "(";
  for (int64_t v : values) out += int64(v);
  return out + "t";
}

// {key: _rebuild_tensor_v2(FloatStorage of `numel` in record data/0, offset, sizes, strides, False)}
std::string state_dict_pickle(int64_t numel, int64_t offset, const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, const std::string& key = "w") {
  const std::string storage = std::string("(") + text("storage") + global("torch", "FloatStorage") + text("0") +
                              text("cpu") + int64(numel) + "tQ";
  const std::string tensor = global("torch._utils", "_rebuild_tensor_v2") + "(" + storage + int64(offset) +
                             tuple(sizes) + tuple(strides) + "\x89" + "tR";
  return std::string("\x80\x02") + "}" + text(key) + tensor + "s.";
}

std::string error_of(const std::string& path) {
  try {
    read_tensor_file(path);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no CheckpointError)";
}

// One line that starts with the file and the reader's refusal.
void expect_refusal(const std::string& path, const std::string& message, const std::string& what) {
  EXPECT_EQ(message.rfind(path + ": not a readable weight file: ", 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

struct TensorFileBounds : ::testing::Test {
  std::string path = temp_path();
  void TearDown() override { fs::remove(path); }
};

// The builder above makes a file the reader accepts: the refusals below are the sizes', not
// the pickle's.
TEST_F(TensorFileBounds, TheHandWrittenStateDictReads) {
  write_file(path, zip_bytes(state_dict_pickle(6, 0, {2, 3}, {3, 1}), 24));
  const auto tensors = read_tensor_file(path);
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(tensors[0].first, "w");
  EXPECT_EQ(tensors[0].second.sizes(), (std::vector<int64_t>{2, 3}));
}

TEST_F(TensorFileBounds, AStorageWhoseByteCountWrapsInt64IsRefused) {
  // (2^62 + 1) floats are 2^64 + 4 bytes: 4 once wrapped, the size of the record.
  write_file(path, zip_bytes(state_dict_pickle((int64_t{1} << 62) + 1, 0, {1}, {1}), 4));
  expect_refusal(path, error_of(path), "record data/0: storage of 4611686018427387905 torch.FloatStorage elements");
  write_file(path, zip_bytes(state_dict_pickle(-1, 0, {1}, {1}), 4));
  expect_refusal(path, error_of(path), "record data/0: storage of -1 torch.FloatStorage elements");
}

TEST_F(TensorFileBounds, SizesAndStridesWhoseLastIndexWrapsInt64AreRefused) {
  // (2^32 + 1 - 1) * 2^32 = 2^64: index 0 once wrapped, inside a one-element storage.
  write_file(path, zip_bytes(state_dict_pickle(1, 0, {(int64_t{1} << 32) + 1}, {int64_t{1} << 32}), 4));
  expect_refusal(path, error_of(path), "tensor over record data/0 exceeds its storage of 1 elements");
  // Three terms of 2^62 each (offset and two dimensions), whose sum passes INT64_MAX.
  write_file(path, zip_bytes(
                       state_dict_pickle(1, int64_t{1} << 62, {2, 2}, {int64_t{1} << 62, int64_t{1} << 62}), 4));
  expect_refusal(path, error_of(path), "tensor over record data/0 exceeds its storage of 1 elements");
  // Sizes whose product wraps, over stride 0 (an expanded tensor, legal in itself).
  write_file(path, zip_bytes(state_dict_pickle(1, 0, {int64_t{1} << 32, int64_t{1} << 32}, {0, 0}), 4));
  expect_refusal(path, error_of(path), "tensor over record data/0 exceeds its storage of 1 elements");
  write_file(path, zip_bytes(state_dict_pickle(6, 0, {2, -3}, {3, 1}), 24));
  expect_refusal(path, error_of(path), "tensor over record data/0: negative size or stride");
}

// A tensor name must be text: it becomes a JSON key when the weights are exported (found by
// torch_save_fuzzer: write_safetensors died on it).
TEST_F(TensorFileBounds, ATensorNameThatIsNotUtf8IsRefused) {
  write_file(path, zip_bytes(state_dict_pickle(6, 0, {2, 3}, {3, 1}, "w\xC3("), 24));
  expect_refusal(path, error_of(path), "is not UTF-8");
  write_file(path, zip_bytes(state_dict_pickle(6, 0, {2, 3}, {3, 1}, "w\xC3\xA9"), 24));
  EXPECT_EQ(read_tensor_file(path).at(0).first, "w\xC3\xA9");  // é is fine
}

TEST_F(TensorFileBounds, AListAppendedToItselfIsRefused) {
  // EMPTY_LIST, BINPUT 0, BINGET 0, APPEND: a list that holds itself (a shared_ptr cycle).
  write_file(path, zip_bytes(std::string("\x80\x02]q\x00h\x00" "a.", 9), 0));
  expect_refusal(path, error_of(path), "malformed pickle (a list or dict inside itself)");
  // The same cycle through a second list: L1.append(L0), then L0.append(L1).
  write_file(path, zip_bytes(std::string("\x80\x02]q\x00]q\x01h\x00" "aa.", 13), 0));
  expect_refusal(path, error_of(path), "already inside another object");
  // A dict set as its own value.
  write_file(path, zip_bytes(std::string("\x80\x02}q\x00", 5) + text("k") + std::string("h\x00s.", 4), 0));
  expect_refusal(path, error_of(path), "malformed pickle (a list or dict inside itself)");
}

TEST_F(TensorFileBounds, DeepNestingIsRefusedBeforeItCanOverflowTheStack) {
  // A million nested 1-tuples (one byte each): freeing them would recurse a million deep.
  write_file(path, zip_bytes("\x80\x02)" + std::string(1'000'000, '\x85') + ".", 0));
  expect_refusal(path, error_of(path), "objects nested more than 1000 deep");
  // A million lists, each appended into the one before it.
  write_file(path, zip_bytes("\x80\x02" + std::string(1'000'000, ']') + std::string(999'999, 'a') + ".", 0));
  expect_refusal(path, error_of(path), "objects nested more than 1000 deep");
}

TEST_F(TensorFileBounds, AZipEntryClaimingMoreThanTheFileIsRefusedBeforeItIsAllocated) {
  // data.pkl's central directory entry turned into a deflated one that claims 3.75 GiB:
  // miniz checks the claim against the file only for stored entries.
  std::string bytes = zip_bytes(state_dict_pickle(6, 0, {2, 3}, {3, 1}), 24);
  const std::string name = "archive/data.pkl";
  size_t entry = std::string::npos;
  for (size_t at = bytes.find("PK\x01\x02"); at != std::string::npos; at = bytes.find("PK\x01\x02", at + 1))
    if (bytes.compare(at + 46, name.size(), name) == 0) entry = at;
  ASSERT_NE(entry, std::string::npos) << "no central directory entry for " << name;
  bytes[entry + 10] = 8;  // method: deflate
  bytes[entry + 11] = 0;
  const uint32_t claimed = 0xF0000000u;
  for (int k = 0; k < 4; ++k) bytes[entry + 24 + k] = static_cast<char>(claimed >> (8 * k));  // uncompressed size
  write_file(path, bytes);
  expect_refusal(path, error_of(path), "record data.pkl claims 4026531840 bytes, more than the file's");
}

}  // namespace mlm::model::tensor_file_bounds_test

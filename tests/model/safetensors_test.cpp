// The safetensors format: round trips, tied aliases, Python's `safetensors` as the other side,
// sharded directories, and one clear error for each kind of damaged file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/test_paths.h"
#include "mlm/util/errors.h"
#include "model_test_util.h"

// Named, not anonymous: the unity build compiles this file with the other model tests.
namespace mlm::model::safetensors_test {
namespace fs = std::filesystem;

struct Dir {
  fs::path path = fs::temp_directory_path() / ("mlm_safetensors_test_" + std::to_string(::getpid()));
  Dir() { fs::remove_all(path), fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "(no CheckpointError)";
}

TensorDict sample() {
  torch::manual_seed(3);
  return {{"a.weight", torch::randn({3, 5})},
          {"b.half", torch::randn({4}).to(torch::kBFloat16)},
          {"c.ids", torch::arange(7, torch::kInt64)},
          {"d.scalar", torch::tensor(2.5)},
          {"e.empty", torch::empty({0, 4})},
          {"f.f16", torch::randn({2, 2}).to(torch::kFloat16)}};
}

void expect_same(const TensorDict& a, const TensorDict& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(a[i].second.scalar_type(), b[i].second.scalar_type()) << a[i].first;
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  }
}

// Writes a file of `header` (given length field) followed by `data` bytes.
void write_raw(const std::string& path, const std::string& header, uint64_t length, size_t data) {
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(length >> (8 * i)));
  out << header << std::string(data, '\0');
}

TEST(Safetensors, RoundTripsEveryDtypeInFileOrderAndAlignsTheData) {
  Dir dir;
  const auto tensors = sample();
  write_safetensors(dir.file("m.safetensors"), tensors);
  expect_same(read_safetensors(dir.file("m.safetensors")), tensors);
  std::ifstream in(dir.file("m.safetensors"), std::ios::binary);
  unsigned char length[8];
  in.read(reinterpret_cast<char*>(length), 8);
  EXPECT_EQ(length[0] % 8, 0);  // the data section starts 8-byte aligned
  EXPECT_FALSE(fs::exists(dir.file("m.safetensors.tmp")));
}

// An empty tensor starts where the next one does. Enough of them that std::sort would not be an
// insertion sort (a fuzzed checkpoint of 200 tensors was read back as overlapping tensors).
TEST(Safetensors, EmptyTensorsBetweenOthersRoundTripInOrder) {
  Dir dir;
  TensorDict tensors;
  for (int i = 0; i < 100; ++i) {
    tensors.emplace_back("layer" + std::to_string(i) + ".weight", i % 3 == 0 ? torch::empty({0, 4}) : torch::randn({2, 3}));
    tensors.emplace_back("layer" + std::to_string(i) + ".bias", i % 2 == 0 ? torch::empty({0}) : torch::randn({3}));
  }
  write_safetensors(dir.file("e.safetensors"), tensors);
  expect_same(read_safetensors(dir.file("e.safetensors")), tensors);
}

TEST(Safetensors, TiedAliasesAreStoredOnce) {
  Dir dir;
  const auto shared = torch::randn({4, 2});
  write_safetensors(dir.file("t.safetensors"), {{"embed", shared}, {"decoder", shared}, {"other", shared.clone()}});
  const auto back = read_safetensors(dir.file("t.safetensors"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "embed");
  EXPECT_EQ(back[1].first, "other");
}

TEST(Safetensors, PythonReadsOursAndWeReadPythons) {
  Dir dir;
  const auto tensors = sample();
  write_safetensors(dir.file("ours.safetensors"), tensors);
  const std::string script =
      "import sys, torch\n"
      "from safetensors.torch import load_file, save_file\n"
      "d = load_file(sys.argv[1])\n"
      "assert list(d) == ['a.weight', 'b.half', 'c.ids', 'd.scalar', 'e.empty', 'f.f16'], list(d)\n"
      "assert d['c.ids'].tolist() == list(range(7)) and d['d.scalar'].item() == 2.5\n"
      "assert d['e.empty'].shape == (0, 4) and d['f.f16'].dtype == torch.float16\n"
      "save_file(d, sys.argv[2])\n";
  std::ofstream(dir.file("check.py")) << script;
  const std::string command = std::string(MLM_PYTHON) + " " + dir.file("check.py") + " " +
                              dir.file("ours.safetensors") + " " + dir.file("theirs.safetensors");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  auto theirs = read_safetensors(dir.file("theirs.safetensors"));
  std::sort(theirs.begin(), theirs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  expect_same(theirs, tensors);  // sample() is in name order too
}

TEST(Safetensors, DamagedFilesAreOneErrorNamingTheFileAndTheFault) {
  Dir dir;
  const auto path = dir.file("bad.safetensors");
  std::ofstream(path) << "abc";
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find(path + ": truncated safetensors file (3 bytes"),
            std::string::npos);

  write_raw(path, R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4096, 8);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find(path + ": truncated safetensors header: it claims 4096"),
            std::string::npos);

  const std::string not_json = "{\"a\": nope}";
  write_raw(path, not_json, not_json.size(), 0);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find(path + ": safetensors header is not JSON"),
            std::string::npos);

  const std::string outside = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  write_raw(path, outside, outside.size(), 8);
  EXPECT_NE(error_of([&] { read_safetensors(path); })
                .find(path + ": tensor 'a': data_offsets [0, 16] point outside the file's 8 data bytes"),
            std::string::npos);

  const std::string wrong_size = R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  write_raw(path, wrong_size, wrong_size.size(), 8);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("shape [3] of F32 needs 12 bytes but data_offsets span 8"),
            std::string::npos);

  const std::string overlap =
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  write_raw(path, overlap, overlap.size(), 12);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("tensors 'a' and 'b' overlap"), std::string::npos);

  const std::string dtype = R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})";
  write_raw(path, dtype, dtype.size(), 2);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("unsupported dtype \"F8_E4M3\""), std::string::npos);
}

// Sizes past int64, and shapes whose element count wraps to the byte count data_offsets give:
// CheckpointError naming the file and the tensor, not LibTorch's c10::Error from torch::empty.
TEST(Safetensors, SizesPastInt64AreRefusedBeforeLibTorchSeesThem) {
  Dir dir;
  const auto path = dir.file("huge.safetensors");
  // 2^32 x 2^32 elements: 0 once the product wraps in 64 bits, as many as [0, 0] holds.
  const std::string wraps = R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})";
  write_raw(path, wraps, wraps.size(), 0);
  auto message = error_of([&] { read_safetensors(path); });
  EXPECT_NE(message.find(path + ": tensor 'a': shape [4294967296,4294967296] has more elements than a tensor can hold"),
            std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  // 2^64 - 1: -1 as an int64 size.
  const std::string negative = R"({"a":{"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,0]}})";
  write_raw(path, negative, negative.size(), 0);
  message = error_of([&] { read_safetensors(path); });
  EXPECT_NE(message.find(path + ": tensor 'a': shape [18446744073709551615] is not a list of sizes"),
            std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(HfDirectory, ReadsShardedIndexesAndNamesWhatIsMissing) {
  Dir dir;
  const auto tensors = sample();
  const TensorDict first(tensors.begin(), tensors.begin() + 3), second(tensors.begin() + 3, tensors.end());
  write_safetensors(dir.file("model-00001-of-00002.safetensors"), first);
  write_safetensors(dir.file("model-00002-of-00002.safetensors"), second);
  nlohmann::json map;
  for (const auto& [name, _] : first) map[name] = "model-00001-of-00002.safetensors";
  for (const auto& [name, _] : second) map[name] = "model-00002-of-00002.safetensors";
  std::ofstream(dir.file("model.safetensors.index.json")) << nlohmann::json{{"metadata", {}}, {"weight_map", map}};
  EXPECT_EQ(find_hf_weights(dir.path.string()), dir.file("model.safetensors.index.json"));
  expect_same(read_hf_weights(dir.path.string()), tensors);

  map["z.absent"] = "model-00002-of-00002.safetensors";
  std::ofstream(dir.file("model.safetensors.index.json")) << nlohmann::json{{"weight_map", map}};
  EXPECT_NE(error_of([&] { read_hf_weights(dir.path.string()); })
                .find("names z.absent in shard model-00002-of-00002.safetensors, which lacks it"),
            std::string::npos);
  fs::remove(dir.file("model-00002-of-00002.safetensors"));
  EXPECT_NE(error_of([&] { read_hf_weights(dir.path.string()); }).find("shard model-00002-of-00002.safetensors is missing"),
            std::string::npos);
}

TEST(HfDirectory, ConfigJsonShapesThatDisagreeAreOneErrorListingEach) {
  Dir dir;
  auto cfg = testing::tiny_config(config::NormPosition::post);
  torch::manual_seed(5);
  BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
  write_safetensors(dir.file("model.safetensors"), to_hf_state_dict(model));
  std::ofstream(dir.file("config.json"))
      << nlohmann::json{{"model_type", "bert"}, {"hidden_size", cfg.hidden_size * 2}, {"num_hidden_layers", 7}};
  const auto message = error_of([&] { init_from_pretrained(model, dir.path.string()); });
  EXPECT_NE(message.find(dir.file("config.json") + ": the model it describes differs from this one: hidden_size " +
                         std::to_string(cfg.hidden_size * 2) + " (set model.hidden_size: " +
                         std::to_string(cfg.hidden_size) + "), num_hidden_layers 7"),
            std::string::npos)
      << message;
  std::ofstream(dir.file("config.json")) << R"({"model_type": "albert"})";
  const auto albert = error_of([&] { init_from_pretrained(model, dir.path.string()); });
  EXPECT_NE(albert.find("model_type is \"albert\"; mlm-train reads BERT, RoBERTa, XLM-RoBERTa, ModernBERT, "
                        "ELECTRA and DeBERTa-v2 models"),
            std::string::npos)
      << albert;
  std::ofstream(dir.file("config.json")) << R"({"model_type": "deberta-v2"})";
  const auto deberta = error_of([&] { init_from_pretrained(model, dir.path.string()); });
  EXPECT_NE(deberta.find("a deberta_v2 model, but model.architecture is bert"), std::string::npos) << deberta;
  std::ofstream(dir.file("config.json")) << R"({"model_type": "bert", "hidden_size": "wide"})";
  EXPECT_NE(error_of([&] { init_from_pretrained(model, dir.path.string()); }).find("hidden_size is \"wide\""),
            std::string::npos);
}

}  // namespace mlm::model::safetensors_test

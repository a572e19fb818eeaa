#include "mlm/model/hf/hf_directory.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "mlm/model/hf/config_fields.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/util/atomic_file.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace fs = std::filesystem;
namespace {

// transformers' order of preference; model.pt is an mlm-train checkpoint's weights.
constexpr const char* kWeightFiles[] = {"model.safetensors", "model.safetensors.index.json",
                                        "pytorch_model.bin", "pytorch_model.bin.index.json",
                                        "model.pt"};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TensorDict read_weight_file(const std::string& path) {
  return ends_with(path, ".safetensors") ? read_safetensors(path) : read_tensor_file(path);
}

// A sharded checkpoint: {"weight_map": {tensor: shard file}}; every shard is read once.
TensorDict read_sharded(const std::string& index_path) {
  const auto index = read_json_file(index_path);
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    throw CheckpointError(index_path + ": no \"weight_map\" object");
  std::map<std::string, std::set<std::string>> wanted;  // shard -> tensors it must hold
  for (const auto& [tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string()) throw CheckpointError(index_path + ": weight_map entry " + tensor + " is not a file name");
    wanted[shard.get<std::string>()].insert(tensor);
  }
  const fs::path dir = fs::path(index_path).parent_path();
  TensorDict out;
  std::set<std::string> names;
  for (const auto& [shard, tensors] : wanted) {
    const auto path = (dir / shard).string();
    if (!fs::exists(path)) throw CheckpointError(index_path + ": shard " + shard + " is missing");
    auto found = tensors;
    for (auto& [name, tensor] : read_weight_file(path)) {
      if (!names.insert(name).second) throw CheckpointError(path + ": tensor " + name + " is in two shards");
      found.erase(name);
      out.emplace_back(std::move(name), std::move(tensor));
    }
    if (!found.empty())
      throw CheckpointError(fmt::format("{}: names {} in shard {}, which lacks it", index_path, *found.begin(), shard));
  }
  return out;
}

}  // namespace

std::string find_hf_weights(const std::string& dir) {
  for (const char* name : kWeightFiles)
    if (fs::exists(fs::path(dir) / name)) return (fs::path(dir) / name).string();
  return "";
}

TensorDict read_hf_weights(const std::string& dir) {
  const auto path = find_hf_weights(dir);
  if (path.empty())
    throw CheckpointError(dir + ": no weights (model.safetensors, pytorch_model.bin, a sharded index, or model.pt)");
  return ends_with(path, ".index.json") ? read_sharded(path) : read_weight_file(path);
}

void write_hf_files(const std::string& output_dir, const nlohmann::json& config_json, const TensorDict& weights,
                    WeightFormat format) {
  const fs::path dir(output_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointError(dir.string() + ": cannot create directory: " + ec.message());
  write_file_atomically(dir / "config.json", config_json.dump(2) + "\n");
  if (format == WeightFormat::safetensors)
    write_safetensors((dir / "model.safetensors").string(), weights);
  else
    write_tensor_file((dir / "pytorch_model.bin").string(), weights);
}

}  // namespace mlm::model

#include "mlm/train/merge/merge_network.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <map>

#include "mlm/model/hf/hf_directory.h"
#include "mlm/train/merge/merge_compat.h"
#include "mlm/train/merge/tensor_merge.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/util/read_file.h"

namespace fs = std::filesystem;

namespace mlm::train::merge {
namespace {

NetworkFiles open_network(const ResolvedInput& input, const std::string& network) {
  const auto dir = network.empty() ? input.dir : input.dir / network;
  try {
    return {input.label, dir, model::SafetensorsFile((dir / "model.safetensors").string())};
  } catch (const CheckpointError& e) {
    throw UsageError(fmt::format("model {}: {}", input.label, e.what()));
  }
}

// A tensor of `file` by name, in float32 when it is a floating one (mergekit's dtype: float32).
torch::Tensor read_tensor(const NetworkFiles& file, const std::map<std::string, const model::SafetensorsFile::Info*>& index,
                          const std::string& name) {
  try {
    auto t = file.weights.read(*index.at(name));
    return t.is_floating_point() ? t.to(torch::kFloat32) : t;
  } catch (const CheckpointError& e) {
    throw UsageError(fmt::format("model {}: {}", file.label, e.what()));
  }
}

bool same_source(const ResolvedInput& a, const ResolvedInput& b) {
  return fs::weakly_canonical(a.source) == fs::weakly_canonical(b.source);
}

bool is_weight_file(const std::string& name) {
  return name == "config.json" || name == "model.safetensors" || name == "pytorch_model.bin" ||
         name.find(".index.json") != std::string::npos || name.rfind("model-", 0) == 0 ||
         name.rfind("pytorch_model-", 0) == 0;
}

}  // namespace

NetworkMerge merge_network(const MergeSpec& spec, const ResolvedInputs& inputs, const std::string& network,
                           const fs::path& out_dir, model::WeightFormat format) {
  // The models whose tensors the method combines: task_arithmetic and ties leave out a model
  // that is the base (its delta is zero, and mergekit does not count it); slerp's other model.
  std::vector<ResolvedInput> merged_inputs;
  for (const auto& input : inputs.models)
    if (!inputs.base || spec.method == Method::average || !same_source(input, *inputs.base))
      merged_inputs.push_back(input);
  if (merged_inputs.empty()) throw UsageError(spec.origin + ": every model is the base; nothing to merge into it");

  std::vector<NetworkFiles> files;
  for (const auto& input : merged_inputs) files.push_back(open_network(input, network));
  std::optional<NetworkFiles> base;
  if (inputs.base) base = open_network(*inputs.base, network);
  const NetworkFiles& reference = base ? *base : files.front();
  for (const auto& file : files)
    if (&file != &reference) require_mergeable(reference, file);

  std::vector<std::map<std::string, const model::SafetensorsFile::Info*>> index(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    for (const auto& info : files[i].weights.tensors()) index[i][info.name] = &info;
  std::map<std::string, const model::SafetensorsFile::Info*> base_index;
  for (const auto& info : reference.weights.tensors()) base_index[info.name] = &info;

  std::vector<double> weights, densities;
  for (const auto& input : merged_inputs) {
    weights.push_back(input.weight);
    densities.push_back(input.density);
  }
  const bool normalize = spec.normalize.value_or(spec.method != Method::task_arithmetic);
  TaskArithmeticOptions options{spec.method == Method::ties, normalize, spec.lambda, spec.rescale};

  NetworkMerge stats;
  model::TensorDict merged;
  for (const auto& info : reference.weights.tensors()) {
    std::vector<torch::Tensor> tensors;
    for (size_t i = 0; i < files.size(); ++i) tensors.push_back(read_tensor(files[i], index[i], info.name));
    const auto base_tensor = base ? read_tensor(reference, base_index, info.name) : torch::Tensor();
    if (!tensors.front().is_floating_point()) {
      // Ids, not weights (position_ids): the same in every input, or the merge has no meaning.
      const auto& ref = base ? base_tensor : tensors.front();
      for (size_t i = 0; i < files.size(); ++i)
        if (!torch::equal(tensors[i], ref))
          throw UsageError(fmt::format("model {}: integer tensor {} differs from model {}'s", files[i].label,
                                       info.name, reference.label));
      merged.emplace_back(info.name, ref);
      ++stats.copied;
      continue;
    }
    torch::Tensor result;
    switch (spec.method) {
      case Method::average: result = linear_merge(tensors, weights, normalize); break;
      case Method::task_arithmetic:
      case Method::ties: result = task_arithmetic_merge(base_tensor, tensors, weights, densities, options); break;
      case Method::slerp: result = slerp_merge(*spec.t, base_tensor, tensors.front()); break;
    }
    merged.emplace_back(info.name, result.contiguous());
    ++stats.tensors;
  }

  const auto config_text = read_file(reference.dir / "config.json");
  model::write_hf_files(out_dir.string(), nlohmann::json::parse(config_text.value_or("{}")), merged, format);
  merged.clear();
  // The tokenizer's files (and any other beside the weights) as the reference holds them.
  for (const auto& entry : fs::directory_iterator(reference.dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_regular_file() && !is_weight_file(name))
      fs::copy_file(entry.path(), out_dir / name, fs::copy_options::overwrite_existing);
  }
  return stats;
}

}  // namespace mlm::train::merge

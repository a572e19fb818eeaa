#include "mlm/train/merge/merge_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "mlm/model/hf/hf_directory.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/checkpoint/run_checkpoints.h"
#include "mlm/train/tools/commands.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace fs = std::filesystem;

namespace mlm::train::merge {
namespace {

bool is_checkpoint(const fs::path& dir) { return fs::exists(dir / "trainer_state.json") || fs::exists(dir / "DONE"); }
bool is_run_directory(const fs::path& dir) { return fs::is_directory(dir / "checkpoints") && !is_checkpoint(dir); }
bool is_pair(const fs::path& dir) {
  return fs::exists(dir / "generator" / "config.json") && fs::exists(dir / "discriminator" / "config.json");
}

// One model.safetensors beside config.json: read tensor by tensor where it lies.
bool streams_as_is(const fs::path& dir) {
  if (is_checkpoint(dir)) return false;
  if (is_pair(dir)) return streams_as_is(dir / "generator") && streams_as_is(dir / "discriminator");
  return fs::exists(dir / "config.json") && fs::path(model::find_hf_weights(dir.string())).filename() == "model.safetensors";
}

}  // namespace

std::vector<fs::path> run_checkpoints(const fs::path& run_dir) {
  std::vector<std::pair<int64_t, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(run_dir / "checkpoints")) {
    const auto step = parse_checkpoint_step(entry.path().filename().string());
    if (!step || !entry.is_directory()) continue;
    try {
      verify_checkpoint_dir(entry.path(), checkpoint_required_files());
      found.emplace_back(*step, entry.path());
    } catch (const CheckpointError& e) {
      log::warn("merge", "skipping {}: {}", entry.path().string(), e.what());
    }
  }
  if (found.empty()) throw UsageError(run_dir.string() + ": the run holds no complete checkpoint");
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [step, path] : found) out.push_back(std::move(path));
  return out;
}

ResolvedInputs resolve_inputs(const MergeSpec& spec, const fs::path& staging) {
  ResolvedInputs out;
  std::map<std::string, fs::path> staged;  // a directory named twice (a model and the base) is staged once
  auto stage = [&](const fs::path& source) {
    if (!fs::is_directory(source)) throw UsageError("model " + source.string() + ": no such directory");
    const auto key = fs::weakly_canonical(source).string();
    if (const auto it = staged.find(key); it != staged.end()) return it->second;
    fs::path dir = source;
    if (!streams_as_is(source)) {
      dir = staging / "inputs" / std::to_string(staged.size());
      log::info("merge", "{}: exporting to stream its tensors", source.string());
      export_checkpoint(source, dir, model::WeightFormat::safetensors);
    }
    staged.emplace(key, dir);
    return dir;
  };
  auto resolve = [&](const ModelEntry& entry) {
    const fs::path path = entry.path;
    std::vector<fs::path> sources = {path};
    if (fs::is_directory(path) && is_run_directory(path)) {
      const auto all = run_checkpoints(path);
      const auto n = static_cast<size_t>(std::max<int64_t>(entry.last, 1));
      if (all.size() < n)
        throw UsageError(fmt::format("model {}: last {} asks for more checkpoints than the run's {} complete ones",
                                     path.string(), n, all.size()));
      sources.assign(all.end() - static_cast<std::ptrdiff_t>(n), all.end());
    } else if (entry.last > 0) {
      throw UsageError("model " + path.string() + ": last " + std::to_string(entry.last) +
                       " needs a run directory (one holding checkpoints/)");
    }
    std::vector<ResolvedInput> inputs;
    for (const auto& source : sources)
      inputs.push_back({source.string(), source, stage(source), entry.weight.value_or(1.0), entry.density.value_or(1.0)});
    return inputs;
  };
  for (const auto& entry : spec.models)
    for (auto& input : resolve(entry)) out.models.push_back(std::move(input));
  if (!spec.base_model.empty()) {
    auto base = resolve(ModelEntry{spec.base_model, std::nullopt, std::nullopt, 0});
    if (base.size() != 1) throw UsageError("base_model " + spec.base_model + ": one model is expected");
    out.base = std::move(base.front());
  }

  const bool pair = is_pair(out.models.front().dir);
  for (const auto& input : out.models)
    if (is_pair(input.dir) != pair)
      throw UsageError(fmt::format("model {}: {} but model {} is {}", input.label,
                                   pair ? "one network" : "a generator/discriminator pair", out.models.front().label,
                                   pair ? "a pair" : "one network"));
  if (out.base && is_pair(out.base->dir) != pair)
    throw UsageError("base_model " + out.base->label + ": the models are " + (pair ? "pairs" : "single networks") +
                     " but it is not");
  if (!pair)
    out.networks = {""};
  else if (spec.pair == PairPart::whole)
    out.networks = {"generator", "discriminator"};
  else
    out.networks = {"discriminator"};
  return out;
}

}  // namespace mlm::train::merge

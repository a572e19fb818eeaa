// A hub microsoft/deberta-v3-* directory continued as a generator and discriminator pair
// (model.objective rtd). The hub holds one network, the discriminator: deberta.* (the tables
// included), mask_predictions.* (the RTD head) and lm_predictions.lm_head.* (an MLM head, H
// wide, decoding through the word embeddings). The generator was never published: it starts
// as the config builds it (random layers, embed_proj and embedding LayerNorm), reading the
// discriminator's tables as the pair shares them (under gdes the delta starts at zero, so the
// discriminator starts exactly as published), and takes lm_predictions.lm_head.* as its MLM
// head when its width allows (it is the checkpoint's only MLM head, and it decodes through the
// very word embeddings the generator now owns). Every key of the file is used or named.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

#include "../hf/key_report.h"
#include "mlm/model/deberta/deberta_config_json.h"
#include "mlm/model/deberta/deberta_head_layouts.h"
#include "mlm/model/deberta/deberta_rtd.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {

// Where a hub key goes in the pair's layout (RtdPairImpl::hf_state_dict), or empty for a key
// the pair has no place for. The tables are the generator's, which the discriminator reads.
std::string pair_key_of(const RtdGeneratorImpl& generator, const std::string& key) {
  if (generator.is_shared_key(key) || key.starts_with("cls.predictions.")) return "generator." + key;
  if (key.starts_with("deberta.") || key.starts_with("mask_predictions.")) return "discriminator." + key;
  return "";
}

bool is_generator_head(const std::string& pair_key) { return pair_key.starts_with("generator.cls."); }

}  // namespace

void init_deberta_pair_from_discriminator(RtdPairImpl& model, const std::string& dir) {
  namespace fs = std::filesystem;
  const auto config_path = (fs::path(dir) / "config.json").string();
  if (!fs::exists(config_path)) throw CheckpointError(dir + ": no config.json");
  auto ours = model.config();
  ours.vocab_size = model.vocab_size();
  const auto theirs = model_config_from_hf(config_path, ours);
  if (theirs.architecture != config::Architecture::deberta_v2)
    throw CheckpointError(fmt::format("{}: a {} model, but model.architecture is deberta_v2", config_path,
                                      config::to_string(theirs.architecture)));
  auto differences = shape_differences(ours, theirs);
  const auto options = deberta_option_differences(ours, theirs);
  if (!options.empty()) differences += (differences.empty() ? "" : ", ") + options;
  if (!differences.empty())
    throw CheckpointError(config_path + ": the discriminator it describes differs from this model's: " + differences);
  // As load_hf_directory: these change what is computed, not what is read.
  if (theirs.hidden_act != ours.hidden_act)
    log::warn("model", "{}: hidden_act differs from model.hidden_act {}", config_path, config::to_string(ours.hidden_act));
  if (theirs.layer_norm_eps != ours.layer_norm_eps)
    log::warn("model", "{}: layer_norm_eps is {} but model.layer_norm_eps is {}", config_path, theirs.layer_norm_eps,
              ours.layer_norm_eps);

  const auto weights_path = find_hf_weights(dir);
  // Renamed in place, in order: raw[i] is file[i] under the name the file gives it.
  const auto raw = read_hf_weights(dir);
  const auto file = with_legacy_head_keys(raw, weights_path.empty() ? dir : weights_path);
  const bool has_rtd_head = std::any_of(file.begin(), file.end(), [](const auto& kv) {
    return kv.first.starts_with("mask_predictions.");
  });
  if (!has_rtd_head)
    throw CheckpointError(dir + ": one network without an RTD head (mask_predictions.*), but model.objective rtd "
                          "continues a generator and its discriminator: a hub deberta-v3 checkpoint, or a directory "
                          "holding generator/ and discriminator/ (as mlm-export writes them)");

  // The pair as built, overwritten by every tensor the file has a place for.
  std::map<std::string, torch::Tensor> state;
  for (const auto& [key, t] : model.hf_state_dict())
    if (key.find(".cls.predictions.decoder.") == std::string::npos) state.emplace(key, t);
  // The MLM head is taken whole or not at all: a generator narrower than the discriminator
  // cannot take its H-wide dense, and half a head would be neither the file's nor the init's.
  bool head_fits = true;
  for (const auto& [key, t] : file) {
    const auto target = pair_key_of(*model.generator, key);
    const auto it = state.find(target);
    if (is_generator_head(target) && it != state.end() && it->second.sizes() != t.sizes()) head_fits = false;
  }
  KeyMatch match;
  std::vector<std::string> head_not_used, buffers;
  std::set<std::string> from_file;
  for (size_t i = 0; i < file.size(); ++i) {
    const auto& [key, t] = file[i];
    const auto& name = raw[i].first;
    const auto target = pair_key_of(*model.generator, key);
    const auto it = state.find(target);
    if (key == "deberta.embeddings.position_ids") {
      buffers.push_back(name);  // the positions older transformers releases saved: no weight
    } else if (target.empty() || it == state.end()) {
      match.unexpected.push_back(name + " " + shape_str(t));
    } else if (is_generator_head(target) && !head_fits) {
      head_not_used.push_back(name + " " + shape_str(t));
    } else if (it->second.sizes() != t.sizes()) {
      match.mismatched.push_back(name + " file " + shape_str(t) + " vs model " + shape_str(it->second));
    } else {
      it->second = t;
      from_file.insert(target);
    }
  }
  for (const auto& [key, t] : state) {
    const bool from_discriminator = key.starts_with("discriminator.") && key.find("_delta") == std::string::npos;
    const bool table = key.starts_with("generator.") && model.generator->is_shared_key(key.substr(10));
    if ((from_discriminator || table) && !from_file.count(key)) match.missing.push_back(key + " " + shape_str(t));
  }
  if (!match.ok())
    throw CheckpointError(fmt::format("{}: does not hold the discriminator of this model (vocab {}, hidden {}, layers "
                                      "{}){}", weights_path, model.vocab_size(), theirs.hidden_size,
                                      theirs.num_hidden_layers, match.describe()));
  TensorDict merged(state.begin(), state.end());
  model.load_hf_state_dict(merged, weights_path);

  const auto& g = model.generator->config();
  const bool head_taken = from_file.count("generator.cls.predictions.transform.dense.weight") > 0;
  if (!head_not_used.empty())
    log::warn("model", "{}: {} not used: the generator is {} wide, the checkpoint's MLM head {}; the generator's head "
              "starts as initialised", weights_path, join_limited(head_not_used), g.hidden_size, theirs.hidden_size);
  log::info("model", "initialised the DeBERTa discriminator from {} (deberta.*, mask_predictions.*); the generator "
            "({} wide, {} layers, not on the hub) as built, its tables the discriminator's{}{}{}",
            weights_path, g.hidden_size, g.num_hidden_layers, model.gdes() ? " (gdes delta 0)" : "",
            head_taken ? ", its MLM head the checkpoint's lm_predictions.lm_head.*" : "",
            buffers.empty() ? "" : "; " + join_limited(buffers) + " (a buffer, no weight) not read");
}

}  // namespace mlm::model

#include "mlm/model/hf/hf_directory.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "mlm/model/hf/safetensors.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "config_json.h"
#include "mlm/model/electra/electra_hf.h"

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

namespace {

config::ModelConfig read_model_config(const std::string& path, config::ModelConfig c) {
  const auto json = read_json_file(path);
  if (!json.is_object()) throw CheckpointError(path + ": not a JSON object");
  const std::string type = json.value("model_type", "bert");
  if (type == "modernbert") return modernbert_config_from_hf(json, path, c);
  if (type == "electra") return electra_config_from_hf(json, path, c);
  if (type == "roberta" || type == "xlm-roberta") return roberta_config_from_hf(json, path, c);
  if (type != "bert")
    throw CheckpointError(path + ": model_type is " + json["model_type"].dump() +
                          "; mlm-train reads BERT, RoBERTa, XLM-RoBERTa, ModernBERT and ELECTRA models");
  c.architecture = config::Architecture::bert;
  take_common_fields(json, path, c);
  take_bert_layer_fields(json, path, c);
  c.norm = json.value("mlm_train_norm", "") == "pre" ? config::NormPosition::pre : config::NormPosition::post;
  return c;
}

}  // namespace

config::ModelConfig model_config_from_hf(const std::string& path, config::ModelConfig base) {
  auto c = read_model_config(path, std::move(base));
  require_buildable_shape(c, path);
  return c;
}

void require_same_pad_id(const std::string& path, int64_t pad_id) {
  const auto json = read_json_file(path);
  const std::string type = json.is_object() ? json.value("model_type", "") : "";
  if (type != "roberta" && type != "xlm-roberta") return;
  int64_t theirs = pad_id;
  take(json, "pad_token_id", theirs, path);
  if (theirs != pad_id)
    throw CheckpointError(fmt::format("{}: pad_token_id is {} but the tokenizer's [PAD] id is {}; {} numbers "
                                      "positions from pad_token_id + 1, so these weights need the tokenizer "
                                      "they were trained with",
                                      path, theirs, pad_id, type));
}

void init_from_pretrained(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) {
  if (!fs::is_directory(dir)) throw CheckpointError(dir + ": model.init_from is not a directory");
  if (is_electra_pair_dir(dir)) {
    if (!new_tokens.empty())
      throw CheckpointError(dir + ": tokenizer.add_tokens does not grow an ELECTRA generator and discriminator "
                            "pair; continue one network, or add the tokens before pretraining the pair");
    auto* pair = dynamic_cast<ElectraForPreTrainingImpl*>(model.get());
    if (!pair)
      throw CheckpointError(dir + ": holds an ELECTRA generator and discriminator; continue the pair with "
                            "model.architecture electra and model.objective rtd, or one of them with "
                            "model.init_from " + (fs::path(dir) / "generator").string());
    init_electra_pair(*pair, dir);
    return;
  }
  const auto config_path = (fs::path(dir) / "config.json").string();
  if (model->has_rtd() && fs::exists(config_path))
    throw CheckpointError(config_path + ": one network, but model.objective rtd continues a generator and its "
                          "discriminator: a directory holding generator/ and discriminator/ (as mlm-export writes "
                          "them)");
  if (fs::exists(config_path)) {
    require_same_pad_id(config_path, model->pad_id());
    auto ours = model->config();
    ours.vocab_size = model->vocab_size();  // the config's 0 means the tokenizer's size
    const auto theirs = model_config_from_hf(config_path, ours);
    // Rows the new tokens add: the directory holds the vocabulary from before them.
    if (!new_tokens.empty() && theirs.vocab_size >= new_tokens.front().id && theirs.vocab_size < ours.vocab_size)
      ours.vocab_size = theirs.vocab_size;
    if (theirs.architecture != ours.architecture)
      throw CheckpointError(fmt::format("{}: a {} model, but model.architecture is {}", config_path,
                                        config::to_string(theirs.architecture), config::to_string(ours.architecture)));
    const auto differences = shape_differences(ours, theirs);
    if (!differences.empty())
      throw CheckpointError(config_path + ": the model it describes differs from this one: " + differences);
    if (theirs.hidden_act != ours.hidden_act)
      log::warn("model", "{}: hidden_act differs from model.hidden_act {}", config_path, config::to_string(ours.hidden_act));
    if (theirs.layer_norm_eps != ours.layer_norm_eps)
      log::warn("model", "{}: layer_norm_eps is {} but model.layer_norm_eps is {}", config_path,
                theirs.layer_norm_eps, ours.layer_norm_eps);
    if (theirs.global_rope_theta != ours.global_rope_theta || theirs.local_rope_theta != ours.local_rope_theta)
      log::warn("model", "{}: rope_theta global {} / local {} but model.global_rope_theta {} / local_rope_theta {}",
                config_path, theirs.global_rope_theta, theirs.local_rope_theta, ours.global_rope_theta,
                ours.local_rope_theta);
    if (ours.architecture == config::Architecture::bert && theirs.norm != ours.norm)
      log::warn("model", "{}: the weights are {}-LN but model.norm is {}", config_path, config::to_string(theirs.norm),
                config::to_string(ours.norm));
  }
  const auto weights = find_hf_weights(dir);
  auto state = read_hf_weights(dir);
  add_new_token_rows(state, model->vocab_size(), new_tokens, weights);
  model->load_hf_state_dict(state, weights.empty() ? dir : weights);
  log::info("model", "initialised from {}{}", weights,
            new_tokens.empty() ? "" : fmt::format(" ({} new token rows, each its pieces' mean)", new_tokens.size()));
}

}  // namespace mlm::model

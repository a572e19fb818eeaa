#include "mlm/model/pretrained/init_from.h"

#include <fmt/format.h>

#include <filesystem>

#include "mlm/model/architectures.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace fs = std::filesystem;

void init_from_pretrained(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) {
  if (!fs::is_directory(dir)) throw CheckpointError(dir + ": model.init_from is not a directory");
  const auto* owner = spec_owning_directory(dir);
  (owner ? *owner : architecture_spec(model->config().architecture)).init_from(model, dir, new_tokens);
}

void load_hf_directory(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) {
  const auto config_path = (fs::path(dir) / "config.json").string();
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
    if (theirs.norm != ours.norm)
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

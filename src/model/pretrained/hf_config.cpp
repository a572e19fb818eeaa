#include "mlm/model/pretrained/hf_config.h"

#include <fmt/format.h>

#include "mlm/config/architecture_keys.h"
#include "mlm/model/architectures.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/model/pretrained/model_shape.h"

namespace mlm::model {

config::ModelConfig model_config_from_hf(const std::string& path, config::ModelConfig base) {
  const auto json = read_json_file(path);
  if (!json.is_object()) throw CheckpointError(path + ": not a JSON object");
  const std::string type = json.value("model_type", "bert");
  const auto* spec = spec_for_model_type(type);
  if (!spec)
    throw CheckpointError(path + ": model_type is " + json["model_type"].dump() + "; mlm-train reads " +
                          readable_architecture_list() + " models");
  auto c = spec->config_from_hf(json, path, std::move(base));
  require_buildable_shape(c, path);
  return c;
}

nlohmann::json hf_config_json(MaskedLm model) {
  return architecture_spec(model->config().architecture).hf_config_json(*model);
}

void require_same_pad_id(const std::string& path, int64_t pad_id) {
  const auto json = read_json_file(path);
  const std::string type = json.is_object() ? json.value("model_type", "") : "";
  const auto* spec = spec_for_model_type(type);
  if (!spec || !config::architecture_keys(spec->architecture()).positions_follow_pad_id()) return;
  int64_t theirs = pad_id;
  take(json, "pad_token_id", theirs, path);
  if (theirs != pad_id)
    throw CheckpointError(fmt::format("{}: pad_token_id is {} but the tokenizer's [PAD] id is {}; {} numbers "
                                      "positions from pad_token_id + 1, so these weights need the tokenizer "
                                      "they were trained with",
                                      path, theirs, pad_id, type));
}

}  // namespace mlm::model

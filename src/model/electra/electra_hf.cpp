#include "mlm/model/electra/electra_hf.h"

#include "mlm/model/bert/bert_config_json.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/util/errors.h"

namespace mlm::model {

nlohmann::json electra_config_json(const MaskedLmImpl& network, const std::string& architecture) {
  const auto& c = network.config();
  nlohmann::json j;
  j["architectures"] = {architecture};
  j["model_type"] = "electra";
  put_common_fields(network, j);
  put_bert_layer_fields(network, j);
  j["embedding_size"] = config::electra_embedding_size(c);
  // ElectraForSequenceClassification's head, as ElectraConfig's defaults.
  j["summary_type"] = "first";
  j["summary_use_proj"] = true;
  j["summary_activation"] = "gelu";
  j["summary_last_dropout"] = 0.1;
  j["classifier_dropout"] = nullptr;
  j["tie_word_embeddings"] = true;
  j["torch_dtype"] = "float32";
  return j;
}

config::ModelConfig electra_config_from_hf(const nlohmann::json& json, const std::string& path,
                                           config::ModelConfig c) {
  const auto architectures = json.value("architectures", nlohmann::json::array());
  if (architectures.is_array() && !architectures.empty() && architectures[0] == "ElectraForPreTraining")
    throw CheckpointError(path + ": an ElectraForPreTraining (a discriminator) has no masked-LM head; open the "
                          "directory holding it and its generator (generator/, discriminator/), or the generator");
  c.architecture = config::Architecture::electra;
  c.objective = config::Objective::mlm;
  take_common_fields(json, path, c);
  take(json, "embedding_size", c.embedding_size, path);
  take_bert_layer_fields(json, path, c);
  c.norm = config::NormPosition::post;
  return c;
}

}  // namespace mlm::model

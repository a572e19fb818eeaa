#include "mlm/model/electra/electra_hf.h"

#include <fmt/format.h>

#include <filesystem>

#include "mlm/model/bert/bert_config_json.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/util/read_file.h"

namespace mlm::model {
namespace fs = std::filesystem;
namespace {

const char* kTokenizerFiles[] = {"vocab.txt", "tokenizer.json", "tokenizer.model", "spiece.model"};

// The vocabularies of the two directories must be one: the pair shares its embeddings.
void require_one_vocabulary(const fs::path& generator, const fs::path& discriminator) {
  for (const char* name : kTokenizerFiles) {
    const auto a = generator / name, b = discriminator / name;
    if (fs::exists(a) && fs::exists(b) && read_file(a) != read_file(b))
      throw CheckpointError(b.string() + ": differs from " + a.string() +
                            "; a generator and its discriminator share one vocabulary");
  }
}

std::string network_path(const std::string& dir, const char* network) { return (fs::path(dir) / network).string(); }

}  // namespace

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

bool is_electra_pair_dir(const std::string& dir) {
  const auto generator_json = fs::path(dir) / "generator" / "config.json";
  if (!fs::exists(generator_json) || !fs::exists(fs::path(dir) / "discriminator" / "config.json")) return false;
  // Another architecture's pair (DeBERTa-v3's export) is laid out alike: ELECTRA's is model_type electra.
  const auto text = read_file(generator_json);
  const auto json = nlohmann::json::parse(text.value_or(""), nullptr, /*allow_exceptions=*/false);
  return !json.is_object() || json.value("model_type", std::string("electra")) == "electra";
}

config::ModelConfig electra_pair_config(const std::string& dir, config::ModelConfig base) {
  const auto generator_json = network_path(dir, "generator") + "/config.json";
  const auto discriminator_json = network_path(dir, "discriminator") + "/config.json";
  auto network_config = [&](const std::string& path) {
    auto json = read_json_file(path);
    json["architectures"] = nlohmann::json::array();  // read as a network, whichever it is
    return electra_config_from_hf(json, path, base);
  };
  const auto g = network_config(generator_json);
  require_buildable_shape(g, generator_json);
  auto d = network_config(discriminator_json);
  require_buildable_shape(d, discriminator_json);
  if (g.vocab_size != d.vocab_size)
    throw CheckpointError(fmt::format("{}: vocab_size {} differs from the generator's {} ({}); a generator and its "
                                      "discriminator share one vocabulary",
                                      discriminator_json, d.vocab_size, g.vocab_size, generator_json));
  require_one_vocabulary(fs::path(dir) / "generator", fs::path(dir) / "discriminator");
  d.objective = config::Objective::rtd;
  d.generator_hidden_ratio = static_cast<double>(g.hidden_size) / static_cast<double>(d.hidden_size);
  d.generator_layers_ratio = static_cast<double>(g.num_hidden_layers) / static_cast<double>(d.num_hidden_layers);
  const auto derived = config::generator_shape(d);
  if (derived.num_attention_heads != g.num_attention_heads || derived.intermediate_size != g.intermediate_size)
    throw CheckpointError(fmt::format(
        "{}: a generator of width {} with {} heads and intermediate_size {}; mlm-train derives {} heads and {} "
        "(one head per 64 dimensions, 4 x width)",
        generator_json, g.hidden_size, g.num_attention_heads, g.intermediate_size, derived.num_attention_heads,
        derived.intermediate_size));
  require_buildable_shape(d, dir);  // the pair together
  return d;
}

void write_electra_pair(ElectraForPreTrainingImpl& model, const std::string& dir, WeightFormat format) {
  const auto pair = to_hf_pair(model);
  const auto write = [&](const char* network, const nlohmann::json& config_json, const TensorDict& weights) {
    write_hf_files((fs::path(dir) / network).string(), config_json, weights, format);
  };
  write("generator", electra_config_json(*model.generator, "ElectraForMaskedLM"), pair.generator);
  write("discriminator", electra_config_json(model, "ElectraForPreTraining"), pair.discriminator);
}

void init_electra_pair(ElectraForPreTrainingImpl& model, const std::string& dir) {
  if (!is_electra_pair_dir(dir))
    throw CheckpointError(dir + ": model.init_from of objective rtd is a directory holding generator/ and "
                          "discriminator/, each a Hugging Face model directory (config.json and weights)");
  auto ours = model.config();
  ours.vocab_size = model.vocab_size();
  const auto theirs = electra_pair_config(dir, ours);
  // The discriminator's shape, then the generator's, which the ratios give.
  auto differences = shape_differences(ours, theirs);
  const auto generator = generator_config(theirs), our_generator = generator_config(ours);
  const std::pair<const char*, int64_t config::ModelConfig::*> ratios[] = {
      {"generator_hidden_ratio", &config::ModelConfig::hidden_size},
      {"generator_layers_ratio", &config::ModelConfig::num_hidden_layers}};
  for (const auto& [key, field] : ratios)
    if (generator.*field != our_generator.*field)
      differences += fmt::format("{}generator {} {} (model.{} gives {})", differences.empty() ? "" : ", ",
                                 field == &config::ModelConfig::hidden_size ? "hidden_size" : "num_hidden_layers",
                                 generator.*field, key, our_generator.*field);
  if (!differences.empty())
    throw CheckpointError(dir + ": the ELECTRA pair it holds differs from this model: " + differences);
  const auto generator_dir = network_path(dir, "generator"), discriminator_dir = network_path(dir, "discriminator");
  ElectraHfPair pair{read_hf_weights(generator_dir), read_hf_weights(discriminator_dir)};
  load_hf_pair(model, pair, find_hf_weights(generator_dir), find_hf_weights(discriminator_dir));
  log::info("model", "initialised the ELECTRA pair from {}", dir);
}

}  // namespace mlm::model

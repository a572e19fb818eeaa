// The pair's directory of two Hugging Face models (rtd_directory.h): its config read with every
// check, written, and read into a pair.
#include "mlm/model/rtd/rtd_directory.h"

#include <fmt/format.h>

#include <filesystem>

#include "mlm/model/architecture_spec.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "mlm/util/read_file.h"

namespace mlm::model {
namespace {
namespace fs = std::filesystem;

const char* const kPairTokenizerFiles[] = {"vocab.txt", "tokenizer.json", "tokenizer.model", "spiece.model"};
constexpr const char* kEmbeddingSharingKey = "embedding_sharing";

std::string pair_network(const std::string& dir, const char* network) { return (fs::path(dir) / network).string(); }

// The vocabularies of the two directories must be one: the pair shares its embeddings.
void require_one_vocabulary(const fs::path& generator, const fs::path& discriminator) {
  for (const char* name : kPairTokenizerFiles) {
    const auto a = generator / name, b = discriminator / name;
    if (fs::exists(a) && fs::exists(b) && read_file(a) != read_file(b))
      throw CheckpointError(b.string() + ": differs from " + a.string() +
                            "; a generator and its discriminator share one vocabulary");
  }
}

// One network's config.json, read as a network whichever class it names, its shape buildable.
config::ModelConfig network_config(const ArchitectureSpec& spec, const std::string& path,
                                   const config::ModelConfig& base) {
  auto json = read_json_file(path);
  json["architectures"] = nlohmann::json::array();
  const auto c = spec.config_from_hf(json, path, base);
  require_buildable_shape(c, path);
  return c;
}

config::EmbeddingSharing embedding_sharing_of(const std::string& path, config::EmbeddingSharing otherwise) {
  const auto json = read_json_file(path);
  const auto it = json.find(kEmbeddingSharingKey);
  if (it == json.end()) return otherwise;  // a pair written elsewhere takes the run's
  if (*it == "gdes") return config::EmbeddingSharing::gdes;
  if (*it == "shared") return config::EmbeddingSharing::shared;
  throw CheckpointError(fmt::format("{}: {} {}; mlm-train reads \"shared\" or \"gdes\"", path, kEmbeddingSharingKey,
                                    it->dump()));
}

}  // namespace

bool is_rtd_pair_directory(const ArchitectureSpec& spec, const std::string& dir) {
  const auto generator_json = fs::path(pair_network(dir, "generator")) / "config.json";
  if (!fs::exists(generator_json) || !fs::exists(fs::path(pair_network(dir, "discriminator")) / "config.json"))
    return false;
  // Every architecture's pair is laid out alike: the generator's model_type tells whose it is.
  const auto json = nlohmann::json::parse(read_file(generator_json).value_or(""), nullptr, /*allow_exceptions=*/false);
  return json.is_object() && json.value("model_type", std::string()) == spec.hf_model_type();
}

config::ModelConfig rtd_pair_config(const ArchitectureSpec& spec, const std::string& dir, config::ModelConfig base) {
  const auto generator_json = pair_network(dir, "generator") + "/config.json";
  const auto discriminator_json = pair_network(dir, "discriminator") + "/config.json";
  const auto g = network_config(spec, generator_json, base);
  auto d = network_config(spec, discriminator_json, base);
  if (g.vocab_size != d.vocab_size)
    throw CheckpointError(fmt::format("{}: vocab_size {} differs from the generator's {} ({}); a generator and its "
                                      "discriminator share one vocabulary",
                                      discriminator_json, d.vocab_size, g.vocab_size, generator_json));
  require_one_vocabulary(pair_network(dir, "generator"), pair_network(dir, "discriminator"));
  d.objective = config::Objective::rtd;
  d.embedding_sharing = embedding_sharing_of(discriminator_json, base.embedding_sharing);
  d.generator_hidden_ratio = static_cast<double>(g.hidden_size) / static_cast<double>(d.hidden_size);
  d.generator_layers_ratio = static_cast<double>(g.num_hidden_layers) / static_cast<double>(d.num_hidden_layers);
  const auto derived = config::generator_shape(d);
  if (derived.num_attention_heads != g.num_attention_heads || derived.intermediate_size != g.intermediate_size)
    throw CheckpointError(fmt::format(
        "{}: a generator of width {} with {} heads and intermediate_size {}; mlm-train derives {} heads and {} from "
        "the discriminator's shape (one head per 64 dimensions, 4 x width)",
        generator_json, g.hidden_size, g.num_attention_heads, g.intermediate_size, derived.num_attention_heads,
        derived.intermediate_size));
  require_buildable_shape(d, dir);  // the pair together
  return d;
}

std::vector<std::string> write_rtd_pair(RtdPairImpl& model, const std::string& dir, WeightFormat format) {
  const auto& spec = model.spec();
  const auto pair = to_hf_pair(model);
  const auto generator_dir = pair_network(dir, "generator"), discriminator_dir = pair_network(dir, "discriminator");
  write_hf_files(generator_dir, spec.hf_config_json(*model.generator), pair.generator, format);
  auto discriminator_json = spec.hf_config_json(model);
  discriminator_json["architectures"] = {model.networks().discriminator_class()};
  // How the tables were shared, for reading the pair back (transformers keeps unknown fields).
  discriminator_json[kEmbeddingSharingKey] = model.gdes() ? "gdes" : "shared";
  write_hf_files(discriminator_dir, discriminator_json, pair.discriminator, format);
  return {generator_dir, discriminator_dir};
}

bool init_from_rtd_pair_directory(const ArchitectureSpec& spec, MaskedLmImpl& model, const std::string& dir,
                                  const std::vector<NewTokenRow>& new_tokens) {
  if (!spec.rtd_networks() || !is_rtd_pair_directory(spec, dir)) return false;
  const auto name = spec.display_name();
  if (!new_tokens.empty())
    throw CheckpointError(dir + ": tokenizer.add_tokens does not grow " + name + "'s generator and discriminator "
                          "pair; continue one network, or add the tokens before pretraining the pair");
  auto* pair = model.rtd_pair();
  if (!pair)
    throw CheckpointError(dir + ": holds " + name + "'s generator and discriminator; continue the pair with "
                          "model.objective rtd, or the generator with model.init_from " + pair_network(dir, "generator"));
  auto ours = pair->config();
  ours.vocab_size = pair->vocab_size();
  const auto theirs = rtd_pair_config(spec, dir, ours);
  // The discriminator's shape, then the generator's, which the ratios give, then the options.
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
  const auto options = spec.option_differences(ours, theirs);
  if (!options.empty()) differences += (differences.empty() ? "" : ", ") + options;
  if (!differences.empty())
    throw CheckpointError(dir + ": the " + name + " pair it holds differs from this model: " + differences);
  const auto generator_dir = pair_network(dir, "generator"), discriminator_dir = pair_network(dir, "discriminator");
  RtdHfPair weights{read_hf_weights(generator_dir), read_hf_weights(discriminator_dir)};
  load_hf_pair(*pair, weights, find_hf_weights(generator_dir), find_hf_weights(discriminator_dir));
  log::info("model", "initialised the {} generator and discriminator from {}", name, dir);
  return true;
}

double rtd_delta_parameters(const config::ModelConfig& c, double vocab_rows) {
  return c.embedding_sharing == config::EmbeddingSharing::gdes
             ? vocab_rows * static_cast<double>(config::electra_embedding_size(c))
             : 0.0;
}

}  // namespace mlm::model

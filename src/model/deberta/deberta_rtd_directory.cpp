// A DeBERTa pair directory as mlm-export writes it (DIR/generator: DebertaV2ForMaskedLM,
// DIR/discriminator: deberta.* and mask_predictions.*) read back: its objective rtd config, and
// its weights into a DebertaV2ForPreTraining (model.init_from, mlm-eval, mlm-finetune).
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "../hf/key_report.h"
#include "mlm/model/deberta/deberta_config_json.h"
#include "mlm/model/deberta/deberta_head_layouts.h"
#include "mlm/model/deberta/deberta_rtd.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {
namespace fs = std::filesystem;

std::string pair_network_dir(const std::string& dir, const char* network) { return (fs::path(dir) / network).string(); }

config::ModelConfig network_config_of(const std::string& dir, const char* network, const config::ModelConfig& base) {
  const auto path = pair_network_dir(dir, network) + "/config.json";
  const auto c = deberta_config_from_hf(read_json_file(path), path, base);
  require_buildable_shape(c, path);
  return c;
}

}  // namespace

bool is_deberta_pair_dir(const std::string& dir) {
  const auto generator_json = fs::path(pair_network_dir(dir, "generator")) / "config.json";
  if (!fs::exists(generator_json) || !fs::exists(fs::path(pair_network_dir(dir, "discriminator")) / "config.json"))
    return false;
  const auto json = read_json_file(generator_json.string());
  return json.value("model_type", std::string()) == "deberta-v2";
}

config::ModelConfig deberta_pair_config(const std::string& dir, config::ModelConfig base) {
  const auto g = network_config_of(dir, "generator", base);
  auto d = network_config_of(dir, "discriminator", base);
  const auto generator_json = pair_network_dir(dir, "generator") + "/config.json";
  if (g.vocab_size != d.vocab_size)
    throw CheckpointError(fmt::format("{}: vocab_size {} differs from the discriminator's {}; a generator and its "
                                      "discriminator share one vocabulary", generator_json, g.vocab_size, d.vocab_size));
  d.objective = config::Objective::rtd;
  // The export says how it shared the tables; a pair written elsewhere takes the run's.
  const auto sharing = read_json_file(pair_network_dir(dir, "discriminator") + "/config.json")
                           .value("embedding_sharing", std::string());
  d.embedding_sharing = sharing == "gdes"     ? config::EmbeddingSharing::gdes
                        : sharing == "shared" ? config::EmbeddingSharing::shared
                                              : base.embedding_sharing;
  d.generator_hidden_ratio = static_cast<double>(g.hidden_size) / static_cast<double>(d.hidden_size);
  d.generator_layers_ratio = static_cast<double>(g.num_hidden_layers) / static_cast<double>(d.num_hidden_layers);
  const auto derived = config::generator_shape(d);
  if (derived.num_attention_heads != g.num_attention_heads || derived.intermediate_size != g.intermediate_size)
    throw CheckpointError(fmt::format("{}: a generator of width {} with {} heads and intermediate_size {}; mlm-train "
                                      "derives {} heads and {} from the discriminator's shape",
                                      generator_json, g.hidden_size, g.num_attention_heads, g.intermediate_size,
                                      derived.num_attention_heads, derived.intermediate_size));
  return d;
}

void init_deberta_pair(DebertaV2ForPreTrainingImpl& model, const std::string& dir) {
  auto ours = model.config();
  ours.vocab_size = model.vocab_size();
  const auto theirs = deberta_pair_config(dir, ours);
  auto differences = shape_differences(ours, theirs);
  const auto generator = generator_config(theirs), our_generator = generator_config(ours);
  if (generator.hidden_size != our_generator.hidden_size || generator.num_hidden_layers != our_generator.num_hidden_layers)
    differences += fmt::format("{}generator {} x {} layers (model.generator_hidden_ratio and generator_layers_ratio "
                               "give {} x {})", differences.empty() ? "" : ", ", generator.hidden_size,
                               generator.num_hidden_layers, our_generator.hidden_size, our_generator.num_hidden_layers);
  const auto options = deberta_option_differences(ours, theirs);
  if (!options.empty()) differences += (differences.empty() ? "" : ", ") + options;
  if (!differences.empty())
    throw CheckpointError(dir + ": the DeBERTa pair it holds differs from this model: " + differences);

  // The pair's own layout (deberta_rtd.h): the generator's keys, the discriminator's own, and
  // its tables checked against the generator's (gdes: its token embeddings give the delta).
  const auto discriminator_dir = pair_network_dir(dir, "discriminator");
  TensorDict state;
  std::map<std::string, torch::Tensor> generator_tables;
  const auto generator_dir = pair_network_dir(dir, "generator");
  for (auto& [key, t] : with_legacy_head_keys(read_hf_weights(generator_dir), generator_dir)) {
    if (key.rfind("deberta.embeddings.", 0) == 0) generator_tables[key] = t;
    state.emplace_back("generator." + key, t);
  }
  std::vector<std::string> differing;
  for (auto& [key, t] : read_hf_weights(discriminator_dir)) {
    const bool table = key.rfind("deberta.embeddings.", 0) == 0 && key.find("_embeddings.") != std::string::npos;
    if (!table) {
      state.emplace_back("discriminator." + key, t);
      continue;
    }
    const auto it = generator_tables.find(key);
    const bool words = key == "deberta.embeddings.word_embeddings.weight";
    if (it != generator_tables.end() && words && model.gdes()) {
      state.emplace_back("discriminator.deberta.embeddings.word_embeddings_delta",
                         t.to(torch::kFloat32) - it->second.to(torch::kFloat32));
    } else if (it == generator_tables.end() || !torch::equal(t.to(torch::kFloat32), it->second.to(torch::kFloat32))) {
      differing.push_back(key);
    }
  }
  if (!differing.empty())
    throw CheckpointError(discriminator_dir + ": the discriminator's " + join_limited(differing) +
                          " differ from the generator's, which the pair shares" +
                          (model.gdes() ? "" : "; model.embedding_sharing: gdes keeps the token embeddings apart"));
  model.load_hf_state_dict(state, dir);
  log::info("model", "initialised the DeBERTa generator and discriminator from {}", dir);
}

}  // namespace mlm::model

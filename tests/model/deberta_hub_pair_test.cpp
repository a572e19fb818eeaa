// A hub microsoft/deberta-v3-* directory (the discriminator alone, pytorch_model.bin with the
// hub's key set: deberta.*, mask_predictions.*, lm_predictions.lm_head.*; config.json with
// pos_att_type "p2c|c2p"), built by tests/reference/hf_client.py save_deberta_hub at a tiny size,
// continued as a pair (model.objective rtd) and as a masked LM (objective mlm): every hub
// tensor lands where it belongs, the discriminator computes what transformers' DebertaV2Model
// computes on that directory, and a file or config that does not fit is one error naming it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/deberta/deberta_rtd.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/init_from.h"
#include "model_test_util.h"

namespace mlm::model::deberta_hub_pair {

constexpr int64_t kPieces = 200, kRows = 208, kPad = 0;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// hf_client.py `args`; fails the test (with its output) on a non-zero exit.
std::string run_client(const std::string& args, const std::filesystem::path& out) {
  const std::string command = quoted(MLM_PYTHON) + " " +
                              quoted(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") + " " + args +
                              " > " + quoted(out.string()) + " 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  EXPECT_EQ(status, 0) << text.str();
  return text.str();
}

struct Hub {
  config::testing::TempDir dir;
  std::filesystem::path path = dir.path() / "deberta-v3-tiny";
  Hub() {
    run_client("save_deberta_hub " + quoted(path.string()) + " " +
                   quoted(std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt") + " " + std::to_string(kPieces) + " " +
                   std::to_string(kRows),
               dir.path() / "save.out");
  }
  std::map<std::string, torch::Tensor> weights() const {
    std::map<std::string, torch::Tensor> out;
    for (auto& [k, v] : read_hf_weights(path.string())) out[k] = v;
    return out;
  }
};

// The run's model keys for the hub's network, as a user writes them (configs/deberta-v3-*.yaml).
config::ModelConfig hub_shaped(config::Objective objective) {
  config::ModelConfig c;
  c.architecture = config::Architecture::deberta_v2;
  c.objective = objective;
  c.embedding_sharing = config::EmbeddingSharing::gdes;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 48;
  c.max_position_embeddings = 128;
  c.type_vocab_size = 0;
  c.position_buckets = 16;
  c.layer_norm_eps = 1e-7;
  c.vocab_size = kRows;
  return c;
}

MaskedLm build(const config::ModelConfig& c) {
  torch::manual_seed(7);
  return make_masked_lm(c, kRows, kPad);
}

std::map<std::string, torch::Tensor> by_name(const TensorDict& state) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& [k, v] : state) out[k] = v;
  return out;
}

bool starts(const std::string& key, const char* prefix) { return key.rfind(prefix, 0) == 0; }

TEST(DebertaHubPair, EveryHubTensorLandsAndTheDiscriminatorComputesAsTransformers) {
  Hub hub;
  auto model = build(hub_shaped(config::Objective::rtd));
  init_from_pretrained(model, hub.path.string());
  auto& pair = *model->rtd_pair();

  const auto discriminator = by_name(to_hf_pair(pair).discriminator);
  const auto generator = by_name(pair.generator->hf_state_dict());
  int used = 0;
  for (const auto& [key, want] : hub.weights()) {
    SCOPED_TRACE(key);
    if (starts(key, "deberta.") || starts(key, "mask_predictions.")) {
      ASSERT_TRUE(discriminator.count(key));
      EXPECT_TRUE(torch::equal(discriminator.at(key), want));
    } else {
      // The only MLM head of the checkpoint becomes the generator's (same width here).
      ASSERT_TRUE(starts(key, "lm_predictions.lm_head."));
      std::string ours = key == "lm_predictions.lm_head.bias" ? "cls.predictions.bias"
                                                               : "cls.predictions.transform." + key.substr(23);
      ASSERT_TRUE(generator.count(ours)) << ours;
      EXPECT_TRUE(torch::equal(generator.at(ours), want));
    }
    ++used;
  }
  EXPECT_EQ(used, 49);  // 38 deberta.*, 6 mask_predictions.*, 5 lm_predictions.lm_head.*
  // The generator reads the discriminator's token embeddings; under gdes the delta starts at 0.
  EXPECT_TRUE(torch::equal(generator.at("deberta.embeddings.word_embeddings.weight"),
                           hub.weights().at("deberta.embeddings.word_embeddings.weight")));
  EXPECT_EQ(pair.word_embeddings_delta.abs().sum().item<double>(), 0.0);
  // Half as deep as the discriminator, as wide: DeBERTa-v3's generator.
  EXPECT_EQ(pair.generator->config().num_hidden_layers, 1);
  EXPECT_EQ(pair.generator->config().hidden_size, 32);

  // The discriminator's hidden states are DebertaV2Model's on the hub directory.
  const auto ids = torch::tensor({1, 50, 60, 70, 80, 90, 2, 0, 1, 100, 110, 120, 130, 140, 150, 2}, torch::kInt64)
                       .view({2, 8});
  auto mask = ids.ne(kPad).to(torch::kInt64);  // the first row padded at its end
  const auto inputs = hub.dir.path() / "inputs.safetensors", hidden = hub.dir.path() / "hidden.safetensors";
  write_safetensors(inputs.string(), {{"input_ids", ids}, {"attention_mask", mask}});
  const auto answer = run_client("deberta_hidden " + quoted(hub.path.string()) + " " + quoted(inputs.string()) + " " +
                                     quoted(hidden.string()),
                                 hub.dir.path() / "hidden.out");
  ASSERT_NE(answer.find("\"missing\": []"), std::string::npos) << answer;
  model->eval();
  torch::NoGradGuard no_grad;
  MlmInputs in;
  in.input_ids = ids;
  in.attention_mask = mask;
  const auto ours = model->last_hidden_states(in);
  const auto theirs = by_name(read_safetensors(hidden.string())).at("hidden");
  // transformers leaves the padding row as computed; compare the tokens.
  const auto tokens = mask.to(torch::kBool).unsqueeze(-1).expand_as(theirs);
  testing::expect_tensor_near(ours.masked_select(tokens), theirs.masked_select(tokens), 1e-5, "last hidden states");
}

TEST(DebertaHubPair, ObjectiveMlmContinuesTheMaskedLmAndPassesOverTheRtdHead) {
  Hub hub;
  auto model = build(hub_shaped(config::Objective::mlm));
  init_from_pretrained(model, hub.path.string());
  const auto ours = by_name(model->hf_state_dict());
  for (const auto& [key, want] : hub.weights()) {
    if (starts(key, "mask_predictions.")) continue;
    const std::string name = key == "lm_predictions.lm_head.bias" ? "cls.predictions.bias"
                             : starts(key, "lm_predictions.lm_head.") ? "cls.predictions.transform." + key.substr(23)
                                                                      : key;
    ASSERT_TRUE(ours.count(name)) << name;
    EXPECT_TRUE(torch::equal(ours.at(name).narrow(0, 0, want.size(0)), want)) << key;
  }
}

TEST(DebertaHubPair, AGeneratorNarrowerThanTheHeadKeepsItsOwnAndTheRestLoads) {
  Hub hub;
  // With the position_ids buffer older transformers releases saved beside the weights.
  auto state = read_hf_weights(hub.path.string());
  state.emplace_back("deberta.embeddings.position_ids", torch::arange(128, torch::kInt64).unsqueeze(0));
  write_tensor_file((hub.path / "pytorch_model.bin").string(), state);
  auto c = hub_shaped(config::Objective::rtd);
  c.generator_hidden_ratio = 0.5;
  auto model = build(c);
  init_from_pretrained(model, hub.path.string());
  auto& pair = *model->rtd_pair();
  EXPECT_EQ(pair.generator->config().hidden_size, 16);
  // The head whole or not at all: its E-wide LayerNorm would fit, but is not taken alone.
  const auto generator = by_name(pair.generator->hf_state_dict());
  EXPECT_TRUE(torch::equal(generator.at("cls.predictions.transform.LayerNorm.weight"), torch::ones({32})));
  const auto discriminator = by_name(to_hf_pair(pair).discriminator);
  EXPECT_TRUE(torch::equal(discriminator.at("mask_predictions.classifier.weight"),
                           hub.weights().at("mask_predictions.classifier.weight")));
}

// The message of init_from_pretrained's CheckpointError, or "" when it loads.
std::string init_error(MaskedLm model, const std::string& dir) {
  try {
    init_from_pretrained(model, dir);
  } catch (const CheckpointError& e) {
    return e.what();
  }
  return "";
}

void rewrite_config(const std::filesystem::path& hub, const std::string& key, const nlohmann::json& value) {
  const auto path = hub / "config.json";
  auto json = nlohmann::json::parse(std::ifstream(path));
  json[key] = value;
  std::ofstream(path) << json.dump(2);
}

TEST(DebertaHubPair, WhatDoesNotFitIsOneErrorNamingIt) {
  Hub hub;
  const auto c = hub_shaped(config::Objective::rtd);
  {  // A DeBERTa option the run sets otherwise: the weights alone would not tell.
    auto other = c;
    other.pos_att_type = {"c2p"};
    const auto error = init_error(build(other), hub.path.string());
    EXPECT_NE(error.find("pos_att_type [c2p, p2c] (set model.pos_att_type: [c2p])"), std::string::npos) << error;
  }
  {  // A deeper discriminator than the checkpoint's.
    auto other = c;
    other.num_hidden_layers = 4;
    const auto error = init_error(build(other), hub.path.string());
    EXPECT_NE(error.find("num_hidden_layers 2 (set model.num_hidden_layers: 4)"), std::string::npos) << error;
  }
  {  // An attention type mlm-train does not compute, in the hub's string form.
    rewrite_config(hub.path, "pos_att_type", "p2c|c2p|p2p");
    const auto error = init_error(build(c), hub.path.string());
    EXPECT_NE(error.find("config.json: pos_att_type"), std::string::npos) << error;
    EXPECT_NE(error.find("p2p"), std::string::npos) << error;
    rewrite_config(hub.path, "pos_att_type", "p2c|c2p");
  }
  {  // A tensor the pair has no place for is named, never dropped.
    auto state = read_hf_weights(hub.path.string());
    state.emplace_back("lm_predictions.lm_head.extra.weight", torch::zeros({2}));
    write_tensor_file((hub.path / "pytorch_model.bin").string(), state);
    const auto error = init_error(build(c), hub.path.string());
    EXPECT_NE(error.find("unexpected keys: lm_predictions.lm_head.extra.weight [2]"), std::string::npos) << error;
  }
  {  // One network without the RTD head is no discriminator.
    auto state = read_hf_weights(hub.path.string());
    TensorDict encoder;
    for (auto& [k, v] : state)
      if (starts(k, "deberta.")) encoder.emplace_back(k, v);
    write_tensor_file((hub.path / "pytorch_model.bin").string(), encoder);
    const auto error = init_error(build(c), hub.path.string());
    EXPECT_NE(error.find("without an RTD head (mask_predictions.*)"), std::string::npos) << error;
  }
}

}  // namespace mlm::model::deberta_hub_pair

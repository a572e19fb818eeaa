// A config.json's dimensions are checked before a model is built from them: against the
// machine's memory, against themselves (heads that divide the width, no empty dimension) and
// against the weights beside it. Each refusal one CheckpointError line naming the file, the
// key and the value.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include "mlm/model/bert/bert.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/model_shape.h"
#include "mlm/util/errors.h"
#include "model_test_util.h"

namespace mlm::model::config_json_bounds {

namespace fs = std::filesystem;

class ConfigJsonBounds : public ::testing::Test {
 protected:
  ConfigJsonBounds() { fs::create_directories(dir_); }
  ~ConfigJsonBounds() override { fs::remove_all(dir_); }

  std::string write_config(const std::string& json) {
    const auto path = (dir_ / "config.json").string();
    std::ofstream(path) << json;
    return path;
  }
  // The CheckpointError of `f`, which must be one line naming `path`.
  static std::string error_of(const std::function<void()>& f, const std::string& path) {
    try {
      f();
    } catch (const CheckpointError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      return message;
    }
    return "<no CheckpointError>";
  }
  std::string refusal(const std::string& json) {
    const auto path = write_config(json);
    return error_of([&] { model_config_from_hf(path, config::ModelConfig{}); }, path);
  }

  fs::path dir_ = fs::temp_directory_path() / ("mlm_config_json_bounds_" + std::to_string(::getpid()));
};

TEST_F(ConfigJsonBounds, AModelPastTheMachinesMemoryIsRefusedBeforeItIsBuilt) {
  // 2^30 wide with 16 heads: the heads divide it, only the size is wrong.
  const auto message = refusal(R"({"model_type": "bert", "hidden_size": 1073741824, "num_attention_heads": 16})");
  EXPECT_NE(message.find("hidden_size 1073741824"), std::string::npos) << message;
  EXPECT_NE(message.find("memory"), std::string::npos) << message;
  const auto layers = refusal(R"({"model_type": "modernbert", "num_hidden_layers": 4000000000})");
  EXPECT_NE(layers.find("num_hidden_layers 4000000000"), std::string::npos) << layers;
  // BERT-large (335M parameters, 1.3 GB) is far within any machine that runs these tests.
  const auto large = write_config(R"({"model_type": "bert", "hidden_size": 1024, "num_attention_heads": 16,
      "num_hidden_layers": 24, "intermediate_size": 4096, "vocab_size": 30522, "max_position_embeddings": 512})");
  EXPECT_EQ(model_config_from_hf(large, config::ModelConfig{}).hidden_size, 1024);
}

TEST_F(ConfigJsonBounds, DimensionsThatBuildNoModelAreRefused) {
  auto message = refusal(R"({"hidden_size": 768, "num_attention_heads": 10})");
  EXPECT_NE(message.find("hidden_size 768 is not divisible by num_attention_heads 10"), std::string::npos) << message;
  message = refusal(R"({"num_hidden_layers": 0})");
  EXPECT_NE(message.find("num_hidden_layers 0 must be at least 1"), std::string::npos) << message;
  message = refusal(R"({"model_type": "electra", "intermediate_size": -5})");
  EXPECT_NE(message.find("intermediate_size -5 must be at least 1"), std::string::npos) << message;
  message = refusal(R"({"model_type": "roberta", "vocab_size": -1})");
  EXPECT_NE(message.find("vocab_size -1 must be >= 0 (0: the tokenizer's size)"), std::string::npos) << message;
  message = refusal(R"({"model_type": "electra", "embedding_size": -3})");
  EXPECT_NE(message.find("embedding_size -3 must be >= 0 (0: the hidden size)"), std::string::npos) << message;
}

TEST_F(ConfigJsonBounds, WholeNumberFieldsTakeWholeValuesInRangeOnly) {
  // A float was cast as it was: 32.5 truncated to 32, 1e300 undefined (the fuzzer's find).
  auto message = refusal(R"({"model_type": "roberta", "hidden_size": 1e300})");
  EXPECT_NE(message.find("hidden_size is 1e+300, not a whole number"), std::string::npos) << message;
  message = refusal(R"({"model_type": "bert", "num_attention_heads": 2.5})");
  EXPECT_NE(message.find("num_attention_heads is 2.5, not a whole number"), std::string::npos) << message;
  message = refusal(R"({"model_type": "bert", "intermediate_size": 9223372036854775808.0})");
  EXPECT_NE(message.find("intermediate_size is 9.223372036854776e+18, not a whole number"), std::string::npos)
      << message;
  message = refusal(R"({"model_type": "bert", "vocab_size": 18446744073709551615})");
  EXPECT_NE(message.find("vocab_size is 18446744073709551615, not a whole number"), std::string::npos) << message;
  // A whole value written as a float is that number.
  const auto path = write_config(R"({"model_type": "bert", "hidden_size": 64.0, "num_attention_heads": 4})");
  EXPECT_EQ(model_config_from_hf(path, config::ModelConfig{}).hidden_size, 64);
}

TEST_F(ConfigJsonBounds, AConfigJsonDisagreeingWithTheWeightsIsRefused) {
  auto c = testing::tiny_config(config::NormPosition::post);
  c.vocab_size = testing::kTinyVocab;
  torch::manual_seed(1);
  BertForPreTraining source(c, testing::kTinyVocab, testing::kTinyPad);
  const auto weights = to_hf_state_dict(source);
  const std::string config_path = (dir_ / "config.json").string(), weights_path = (dir_ / "model.safetensors").string();
  EXPECT_NO_THROW(require_config_matches_weights(c, weights, config_path, weights_path));

  const auto refused = [&](auto change) {
    auto theirs = c;
    change(theirs);
    return error_of([&] { require_config_matches_weights(theirs, weights, config_path, weights_path); }, config_path);
  };
  auto message = refused([](config::ModelConfig& t) { t.intermediate_size = 999; });
  EXPECT_NE(message.find("intermediate_size 999 disagrees with " + weights_path), std::string::npos) << message;
  EXPECT_NE(message.find("[64, 32]"), std::string::npos) << message;
  message = refused([](config::ModelConfig& t) { t.hidden_size = 1024; });
  EXPECT_NE(message.find("hidden_size 1024"), std::string::npos) << message;
  message = refused([](config::ModelConfig& t) { t.num_hidden_layers = 48; });
  EXPECT_NE(message.find("num_hidden_layers 48 disagrees"), std::string::npos) << message;
  EXPECT_NE(message.find("holds 2 layers"), std::string::npos) << message;
  message = refused([](config::ModelConfig& t) { t.max_position_embeddings = 4096; });
  EXPECT_NE(message.find("max_position_embeddings 4096"), std::string::npos) << message;
  message = refused([](config::ModelConfig& t) { t.vocab_size = 250002; });
  EXPECT_NE(message.find("vocab_size 250002"), std::string::npos) << message;
}

}  // namespace mlm::model::config_json_bounds

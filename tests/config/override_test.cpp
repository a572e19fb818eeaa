// --set section.key=value: the value is YAML, later overrides win, and a malformed override
// or an unknown key is an error naming the override.
#include <gtest/gtest.h>

#include "config_test_util.h"

namespace mlm::config {
namespace {

using testing::config_error_message;

const char* const kYaml = "model:\n  hidden_size: 256\n  num_attention_heads: 4\n";

RunConfig with(const std::vector<std::string>& overrides) {
  return load_config_from_string(kYaml, "x.yaml", overrides);
}

TEST(Override, ScalarsOfEveryType) {
  const RunConfig config = with({"model.num_hidden_layers=3", "optim.learning_rate=3e-4",
                                 "model.sparse_head=false", "train.output_dir=runs/x",
                                 "schedule.decay=cosine", "optim.betas=[0.8, 0.9]"});
  EXPECT_EQ(config.model.num_hidden_layers, 3);
  EXPECT_EQ(config.optim.learning_rate, 3e-4);
  EXPECT_FALSE(config.model.sparse_head);
  EXPECT_EQ(config.train.output_dir, "runs/x");
  EXPECT_EQ(config.schedule.decay, DecayKind::cosine);
  EXPECT_EQ(config.optim.betas[0], 0.8);
  EXPECT_EQ(config.optim.betas[1], 0.9);
}

TEST(Override, ListValues) {
  EXPECT_EQ(with({"data.train_files=[a.txt,b.txt]"}).data.train_files,
            (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(with({"data.train_files=corpus/*.txt"}).data.train_files,
            std::vector<std::string>{"corpus/*.txt"});
  EXPECT_TRUE(with({"data.valid_files=[]"}).data.valid_files.empty());
}

TEST(Override, BeatsTheFileAndLaterBeatsEarlier) {
  EXPECT_EQ(with({"model.hidden_size=512"}).model.hidden_size, 512);
  EXPECT_EQ(with({"train.max_steps=5", "train.max_steps=9"}).train.max_steps, 9);
}

TEST(Override, ValueMayContainEqualsAndSpacesAroundKey) {
  EXPECT_EQ(with({"train.output_dir=runs/a=b"}).train.output_dir, "runs/a=b");
  EXPECT_EQ(with({" train.max_steps =4"}).train.max_steps, 4);
}

TEST(Override, EmptyValueClearsAString) {
  EXPECT_EQ(with({"model.init_from="}).model.init_from, "");
  EXPECT_CONFIG_ERROR(with({"train.max_steps="}), "train.max_steps",
                      "--set 'train.max_steps=': train.max_steps: expected an integer, got "
                      "nothing");
}

TEST(Override, MalformedIsRefused) {
  EXPECT_THROW(with({"model.hidden_size"}), ConfigError);
  EXPECT_CONFIG_ERROR(with({"model.hidden_size"}), "",
                      "--set 'model.hidden_size': expected section.key=value");
  EXPECT_CONFIG_ERROR(with({"=5"}), "", "--set '=5': expected section.key=value");
  EXPECT_CONFIG_ERROR(with({"hidden_size=5"}), "hidden_size",
                      "--set 'hidden_size=5': expected section.key=value");
}

TEST(Override, UnknownKeySuggests) {
  EXPECT_THROW(with({"optim.learnig_rate=1e-4"}), ConfigError);
  EXPECT_EQ(config_error_message([] { with({"optim.learnig_rate=1e-4"}); }),
            "--set 'optim.learnig_rate=1e-4': unknown key 'optim.learnig_rate' (did you mean "
            "'optim.learning_rate'?)");
  EXPECT_CONFIG_ERROR(with({"optimizer.learning_rate=1"}), "optimizer.learning_rate",
                      "unknown key 'optimizer.learning_rate'",
                      "did you mean 'optim.learning_rate'?");
  EXPECT_CONFIG_ERROR(with({"model.hidden_size.x=1"}), "model.hidden_size.x",
                      "unknown key 'model.hidden_size.x'");
}

TEST(Override, InvalidYamlValue) {
  EXPECT_THROW(with({"data.train_files=[a.txt"}), ConfigError);
  EXPECT_CONFIG_ERROR(with({"data.train_files=[a.txt"}), "data.train_files",
                      "--set 'data.train_files=[a.txt': the value is not valid YAML",
                      "quote it");
}

TEST(Override, WrongType) {
  EXPECT_THROW(with({"model.hidden_size=abc"}), ConfigError);
  EXPECT_EQ(config_error_message([] { with({"model.hidden_size=abc"}); }),
            "--set 'model.hidden_size=abc': model.hidden_size: expected an integer, got 'abc'");
}

TEST(Override, ValidationErrorSaysFromSet) {
  EXPECT_CONFIG_ERROR(with({"model.hidden_size=250"}), "model.hidden_size",
                      "x.yaml: model.hidden_size (250) must be divisible by "
                      "model.num_attention_heads (4)",
                      "(from --set 'model.hidden_size=250')");
  // The line of the key the message is about wins over the --set that broke it.
  EXPECT_CONFIG_ERROR(with({"model.num_attention_heads=3"}), "model.hidden_size",
                      "x.yaml:2: model.hidden_size (256) must be divisible by "
                      "model.num_attention_heads (3)");
  EXPECT_CONFIG_ERROR(with({"masking.mlm_probability=0"}), "masking.mlm_probability",
                      "x.yaml: masking.mlm_probability (0) must be in (0, 1]",
                      "(from --set 'masking.mlm_probability=0')");
}

TEST(Override, CanRepairTheFileButNotItsTypeErrors) {
  // A value out of range in the file is fine once a --set replaces it ...
  EXPECT_EQ(load_config_from_string("data:\n  seq_len: 4\n", "x.yaml", {"data.seq_len=64"})
                .data.seq_len,
            64);
  // ... but a value of the wrong type is reported where it stands.
  EXPECT_CONFIG_ERROR(
      load_config_from_string("data:\n  seq_len: long\n", "x.yaml", {"data.seq_len=64"}),
      "data.seq_len", "x.yaml:2: data.seq_len: expected an integer, got 'long'");
}

}  // namespace
}  // namespace mlm::config

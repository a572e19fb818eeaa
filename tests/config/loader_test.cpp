// load_config / load_config_from_string: files that are not configs, YAML that is not the
// right shape, values of the wrong type, unknown keys, and validation errors pointed at
// their line.
#include <gtest/gtest.h>

#include "config_test_util.h"

namespace mlm::config {
namespace {

using testing::config_error_message;
using testing::TempDir;

RunConfig from_yaml(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_config_from_string(yaml, "x.yaml", overrides);
}

// ---- files ------------------------------------------------------------------------------

TEST(LoadFile, ReadsAFile) {
  TempDir dir;
  const auto path = dir.write("c.yaml", "model:\n  hidden_size: 256\n  num_attention_heads: 4\n");
  const RunConfig config = load_config(path);
  EXPECT_EQ(config.model.hidden_size, 256);
  EXPECT_EQ(config.model.num_attention_heads, 4);
  EXPECT_EQ(config.model.num_hidden_layers, 12);  // untouched keys keep their defaults
}

TEST(LoadFile, MissingFile) {
  TempDir dir;
  const auto path = (dir.path() / "nope.yaml").string();
  EXPECT_THROW(load_config(path), ConfigError);
  EXPECT_CONFIG_ERROR(load_config(path), "", path + ": no such config file");
}

TEST(LoadFile, Directory) {
  TempDir dir;
  const auto path = dir.path().string();
  EXPECT_THROW(load_config(path), ConfigError);
  EXPECT_CONFIG_ERROR(load_config(path), "", path + ": is a directory");
}

TEST(LoadFile, EmptyFile) {
  TempDir dir;
  const auto path = dir.write("empty.yaml", "");
  EXPECT_THROW(load_config(path), ConfigError);
  EXPECT_CONFIG_ERROR(load_config(path), "", path + ": config is empty");
  const auto blank = dir.write("blank.yaml", "\n   \n\t\n");
  EXPECT_CONFIG_ERROR(load_config(blank), "", blank + ": config is empty");
}

TEST(LoadFile, OnlyComments) {
  TempDir dir;
  const auto path = dir.write("c.yaml", "# nothing here\n# yet\n");
  EXPECT_THROW(load_config(path), ConfigError);
  EXPECT_CONFIG_ERROR(load_config(path), "", path + ": config has no settings");
}

TEST(LoadFile, BinaryFile) {
  TempDir dir;
  const auto path = dir.write("c.bin", std::string("model:\n\0\x01\x02\xff", 11));
  EXPECT_THROW(load_config(path), ConfigError);
  EXPECT_CONFIG_ERROR(load_config(path), "", path + ": binary data (a NUL byte at offset 7)");
}

TEST(LoadFile, NotUtf8) {
  TempDir dir;
  const auto path = dir.write("latin1.yaml", "train:\n  output_dir: caf\xe9\n");
  EXPECT_THROW(load_config(path), ConfigError);
  EXPECT_CONFIG_ERROR(load_config(path), "", path + ": not UTF-8 text (byte 0xe9 at offset 24)");
  // Valid multi-byte UTF-8 is fine.
  const auto good = dir.write("utf8.yaml", "train:\n  output_dir: runs/caf\xc3\xa9\n");
  EXPECT_EQ(load_config(good).train.output_dir, "runs/caf\xc3\xa9");
}

TEST(LoadFile, OverlongAndSurrogateUtf8) {
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  output_dir: \xc0\xaf\n"), "", "byte 0xc0");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  output_dir: \xed\xa0\x80\n"), "", "byte 0xed");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  output_dir: \xe2\x82\n"), "", "byte 0xe2");
}

// ---- YAML shape ---------------------------------------------------------------------------

TEST(LoadYaml, SyntaxErrorHasLineAndColumn) {
  const std::string yaml = "model:\n  hidden_size: [1, 2\ntrain:\n  max_steps: 3\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "", "x.yaml:3:", "YAML syntax error");
  const std::string message = config_error_message([&] { from_yaml("a: b: c\n"); });
  EXPECT_EQ(message, "x.yaml:1:5: YAML syntax error: illegal map value");
}

TEST(LoadYaml, TopLevelListIsRefused) {
  const std::string yaml = "- model:\n    hidden_size: 3\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "", "x.yaml:1: expected a map of sections",
                      "got a list");
}

TEST(LoadYaml, TopLevelScalarIsRefused) {
  EXPECT_CONFIG_ERROR(from_yaml("hello\n"), "", "expected a map of sections", "got 'hello'");
}

TEST(LoadYaml, SectionListIsRefused) {
  const std::string yaml = "train:\n  max_steps: 5\nmodel:\n  - hidden_size: 256\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "model",
                      "x.yaml:3: model: expected a map of keys", "got a list");
}

TEST(LoadYaml, SectionScalarIsRefused) {
  EXPECT_CONFIG_ERROR(from_yaml("optim: fast\n"), "optim",
                      "x.yaml:1: optim: expected a map of keys", "got 'fast'");
}

TEST(LoadYaml, EmptySectionKeepsDefaults) {
  const RunConfig config = from_yaml("model:\ntrain:\n  max_steps: 7\n");
  EXPECT_EQ(config.model.hidden_size, 768);
  EXPECT_EQ(config.train.max_steps, 7);
}

TEST(LoadYaml, DuplicateKeyIsRefused) {
  const std::string yaml = "model:\n  hidden_size: 256\n  hidden_size: 512\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "model.hidden_size",
                      "x.yaml:3: model.hidden_size is set twice (first at line 2)");
}

TEST(LoadYaml, DuplicateSectionIsRefused) {
  const std::string yaml = "model:\n  hidden_size: 256\nmodel:\n  num_hidden_layers: 2\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "model",
                      "x.yaml:3: section 'model' appears twice (first at line 1)");
}

TEST(LoadYaml, NonScalarKeyIsRefused) {
  EXPECT_CONFIG_ERROR(from_yaml("? [a, b]\n: 1\n"), "", "keys must be plain names, got a list");
}

TEST(LoadYaml, SeveralDocumentsAreRefused) {
  const std::string yaml = "model:\n  hidden_size: 256\n---\ntrain:\n  max_steps: 1\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "", ":3: holds more than one YAML document");
}

TEST(LoadYaml, FlowStyleAndCommentsWork) {
  const RunConfig config = from_yaml(
      "# header\nmodel: {hidden_size: 128, num_attention_heads: 2}  # inline\n"
      "optim:\n  betas: [0.8, 0.99]\n");
  EXPECT_EQ(config.model.hidden_size, 128);
  EXPECT_EQ(config.optim.betas[0], 0.8);
  EXPECT_EQ(config.optim.betas[1], 0.99);
}

// ---- field types --------------------------------------------------------------------------

TEST(LoadTypes, EveryFieldType) {
  const RunConfig config = from_yaml(
      "model:\n  hidden_size: 512\n  num_attention_heads: 8\n  hidden_dropout_prob: 0.25\n"
      "  hidden_act: gelu_tanh\n  sparse_head: false\n  init_from: hf/bert\n"
      "data:\n  train_files: [a.txt, 'b c.txt']\n  format: jsonl\n"
      "optim:\n  betas: [0.85, 0.95]\n");
  EXPECT_EQ(config.model.hidden_size, 512);
  EXPECT_EQ(config.model.hidden_dropout_prob, 0.25);
  EXPECT_EQ(config.model.hidden_act, Activation::gelu_tanh);
  EXPECT_FALSE(config.model.sparse_head);
  EXPECT_EQ(config.model.init_from, "hf/bert");
  EXPECT_EQ(config.data.train_files, (std::vector<std::string>{"a.txt", "b c.txt"}));
  EXPECT_EQ(config.data.format, DataFormat::jsonl);
  EXPECT_EQ(config.optim.betas[1], 0.95);
}

TEST(LoadTypes, WrongIntegerNamesFileLineKeyAndValue) {
  const std::string yaml = "model:\n  num_hidden_layers: 2\n  hidden_size: abc\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_EQ(config_error_message([&] { from_yaml(yaml); }),
            "x.yaml:3: model.hidden_size: expected an integer, got 'abc'");
}

TEST(LoadTypes, IntegerForms) {
  EXPECT_EQ(from_yaml("train:\n  max_tokens: 1e9\n").train.max_tokens, 1000000000);
  EXPECT_EQ(from_yaml("train:\n  max_tokens: 2.5e6\n").train.max_tokens, 2500000);
  EXPECT_EQ(from_yaml("train:\n  seed: +7\n").train.seed, 7);
  EXPECT_EQ(from_yaml("train:\n  seed: 9223372036854775807\n").train.seed, INT64_MAX);
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps: 1.5\n"), "train.max_steps",
                      "x.yaml:2: train.max_steps: expected an integer, got '1.5'");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  seed: 9223372036854775808\n"), "train.seed",
                      "expected an integer in the 64-bit range");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps: [1]\n"), "train.max_steps",
                      "expected an integer, got a list");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps:\n"), "train.max_steps",
                      "expected an integer, got nothing");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps: 1e300\n"), "train.max_steps",
                      "expected an integer, got '1e300'");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps: 0x10\n"), "train.max_steps",
                      "expected an integer, got '0x10'");
}

TEST(LoadTypes, WrongDouble) {
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  learning_rate: fast\n"), "optim.learning_rate",
                      "x.yaml:2: optim.learning_rate: expected a number, got 'fast'");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  learning_rate: .inf\n"), "optim.learning_rate",
                      "expected a finite number, got '.inf'");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  learning_rate: .nan\n"), "optim.learning_rate",
                      "expected a finite number");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  learning_rate: {a: 1}\n"), "optim.learning_rate",
                      "expected a number, got a map");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  learning_rate: 1e999\n"), "optim.learning_rate",
                      "expected a number, got '1e999'");
  EXPECT_EQ(from_yaml("optim:\n  learning_rate: 3e-4\n").optim.learning_rate, 3e-4);
  EXPECT_EQ(from_yaml("optim:\n  learning_rate: .5\n").optim.learning_rate, 0.5);
  EXPECT_EQ(from_yaml("optim:\n  weight_decay: 0\n").optim.weight_decay, 0.0);
}

TEST(LoadTypes, WrongBool) {
  EXPECT_CONFIG_ERROR(from_yaml("model:\n  sparse_head: maybe\n"), "model.sparse_head",
                      "x.yaml:2: model.sparse_head: expected true or false, got 'maybe'");
  EXPECT_CONFIG_ERROR(from_yaml("model:\n  sparse_head: 1\n"), "model.sparse_head",
                      "expected true or false, got '1'");
  EXPECT_TRUE(from_yaml("data:\n  shuffle_files: yes\n").data.shuffle_files);
}

TEST(LoadTypes, WrongString) {
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  output_dir: [a, b]\n"), "train.output_dir",
                      "x.yaml:2: train.output_dir: expected a string, got a list");
  // Numbers are fine as strings; an empty value is the empty string.
  EXPECT_EQ(from_yaml("train:\n  output_dir: 2024\n").train.output_dir, "2024");
  EXPECT_EQ(from_yaml("model:\n  init_from:\n").model.init_from, "");
  EXPECT_EQ(from_yaml("model:\n  init_from: \"null\"\n").model.init_from, "null");
}

TEST(LoadTypes, StringList) {
  EXPECT_EQ(from_yaml("data:\n  train_files: one.txt\n").data.train_files,
            std::vector<std::string>{"one.txt"});  // a scalar is a one-element list
  EXPECT_TRUE(from_yaml("data:\n  train_files: []\n").data.train_files.empty());
  EXPECT_TRUE(from_yaml("data:\n  train_files:\n").data.train_files.empty());
  EXPECT_EQ(from_yaml("data:\n  train_files:\n    - a.txt\n    - b.txt\n").data.train_files,
            (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_CONFIG_ERROR(from_yaml("data:\n  train_files: {a: 1}\n"), "data.train_files",
                      "x.yaml:2: data.train_files: expected a list of strings, got a map");
  EXPECT_CONFIG_ERROR(from_yaml("data:\n  train_files: [a.txt, [b.txt]]\n"), "data.train_files",
                      "data.train_files: item 2: expected a string, got a list");
}

TEST(LoadTypes, Betas) {
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  betas: [0.9]\n"), "optim.betas",
                      "x.yaml:2: optim.betas: expected a list of 2 numbers",
                      "got a list of 1 items");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  betas: 0.9\n"), "optim.betas",
                      "expected a list of 2 numbers such as [0.9, 0.999], got '0.9'");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  betas: [0.9, high]\n"), "optim.betas",
                      "optim.betas: item 2: expected a number, got 'high'");
}

TEST(LoadTypes, Enum) {
  EXPECT_CONFIG_ERROR(from_yaml("model:\n  hidden_act: relu\n"), "model.hidden_act",
                      "x.yaml:2: model.hidden_act: expected one of gelu, gelu_tanh, got 'relu'");
  EXPECT_CONFIG_ERROR(from_yaml("schedule:\n  decay: cosin\n"), "schedule.decay",
                      "expected one of linear, cosine, constant, wsd, got 'cosin'",
                      "(did you mean 'cosine'?)");
  EXPECT_CONFIG_ERROR(from_yaml("schedule:\n  decay_shape: one_minus_sqr\n"),
                      "schedule.decay_shape",
                      "expected one of linear, one_minus_sqrt, got 'one_minus_sqr'",
                      "(did you mean 'one_minus_sqrt'?)");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  type: adam\n"), "optim.type",
                      "x.yaml:2: optim.type: expected one of adamw, lamb, stable_adamw, got 'adam'",
                      "(did you mean 'adamw'?)");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  precision: [bf16]\n"), "train.precision",
                      "expected one of auto, fp32, bf16, fp16, got a list");
  EXPECT_EQ(from_yaml("data:\n  format: auto\n").data.format, DataFormat::auto_detect);
}

TEST(LoadTypes, LongAndControlValuesAreShownSafely) {
  const std::string message = config_error_message(
      [] { from_yaml("model:\n  hidden_size: \"a\\tb" + std::string(100, 'x') + "\"\n"); });
  EXPECT_NE(message.find("'a\\tb"), std::string::npos) << message;
  EXPECT_NE(message.find("...'"), std::string::npos) << message;
  EXPECT_LT(message.size(), 160u);
}

// ---- unknown keys -----------------------------------------------------------------------

TEST(LoadUnknown, MisspelledKeySuggestsTheRightOne) {
  const std::string yaml = "optim:\n  weight_decay: 0.01\n  learnig_rate: 1e-4\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_EQ(config_error_message([&] { from_yaml(yaml); }),
            "x.yaml:3: unknown key 'optim.learnig_rate' (did you mean 'optim.learning_rate'?)");
}

TEST(LoadUnknown, ListsEveryUnknownKeyInOneError) {
  const std::string yaml =
      "modle:\n  hidden_size: 1\n"
      "model:\n  hiden_size: 256\n  colour: blue\n"
      "train:\n  learning_rate: 0.1\n"
      "epochs: 3\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(
      from_yaml(yaml), "modle", "x.yaml: 5 unknown keys: ",
      "'modle' (line 1, did you mean 'model'?)",
      "'model.hiden_size' (line 4, did you mean 'model.hidden_size'?)",
      "'model.colour' (line 5)", "'train.learning_rate' (line 7, did you mean "
      "'optim.learning_rate'?)",
      "'epochs' (line 8)", "the sections are model, tokenizer, data,");
  const std::string message = config_error_message([&] { from_yaml(yaml); });
  EXPECT_EQ(message.find("'model.colour' (line 5, did"), std::string::npos) << message;
}

TEST(LoadUnknown, UnknownSection) {
  EXPECT_CONFIG_ERROR(from_yaml("optimizer:\n  learning_rate: 1\n"), "optimizer",
                      "x.yaml:1: unknown section 'optimizer'", "the sections are model,");
  EXPECT_CONFIG_ERROR(from_yaml("trian:\n  max_steps: 1\n"), "trian",
                      "unknown section 'trian' (did you mean 'train'?)");
}

TEST(LoadUnknown, KeyAtTheTopLevelPointsToItsSection) {
  EXPECT_CONFIG_ERROR(from_yaml("learning_rate: 1e-4\n"), "learning_rate",
                      "unknown section 'learning_rate' (did you mean 'optim.learning_rate'?)");
}

TEST(LoadUnknown, DottedKeyAtTheTopLevel) {
  EXPECT_CONFIG_ERROR(from_yaml("optim.learning_rate: 1e-4\n"), "optim.learning_rate",
                      "x.yaml:1: unknown section 'optim.learning_rate' (write it nested, "
                      "'learning_rate:' indented under 'optim:')");
}

TEST(LoadUnknown, NoSuggestionWhenNothingIsClose) {
  const std::string message =
      config_error_message([] { from_yaml("model:\n  frobnicate_widgets: 1\n"); });
  EXPECT_EQ(message, "x.yaml:2: unknown key 'model.frobnicate_widgets'");
}

TEST(LoadUnknown, ReportedBeforeTypeErrors) {
  EXPECT_CONFIG_ERROR(from_yaml("model:\n  hidden_size: abc\n  hiden_act: gelu\n"),
                      "model.hiden_act", "unknown key 'model.hiden_act'");
}

// ---- validation errors carry the line ---------------------------------------------------

TEST(LoadValidation, ErrorPointsAtTheLineOfTheKey) {
  const std::string yaml = "model:\n  num_hidden_layers: 2\n  hidden_size: 770\n";
  EXPECT_THROW(from_yaml(yaml), ConfigError);
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "model.hidden_size",
                      "x.yaml:3: model.hidden_size (770) must be divisible by "
                      "model.num_attention_heads (12)");
}

TEST(LoadValidation, DefaultKeyPointsAtTheOtherKeyNamed) {
  // hidden_size keeps its default; the line is that of num_attention_heads.
  const std::string yaml = "train:\n  max_steps: 10\nmodel:\n  num_attention_heads: 10\n";
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "model.hidden_size",
                      "x.yaml:4: model.hidden_size (768) must be divisible by "
                      "model.num_attention_heads (10)");
}

TEST(LoadValidation, SeqLenAbovePositions) {
  const std::string yaml = "data:\n  seq_len: 1024\n";
  EXPECT_CONFIG_ERROR(from_yaml(yaml), "data.seq_len",
                      "x.yaml:2: data.seq_len (1024) must be <= model.max_position_embeddings");
}

TEST(LoadValidation, FromSetSaysSo) {
  EXPECT_CONFIG_ERROR(from_yaml("model:\n  hidden_size: 768\n", {"model.hidden_size=770"}),
                      "model.hidden_size", "x.yaml: model.hidden_size (770)",
                      "model.num_attention_heads (12)",
                      "(from --set 'model.hidden_size=770')");
}

TEST(LoadValidation, KeyOfAnotherOptimizerIsNamedWithItsLine) {
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  type: stable_adamw\n  weight_decay: 1.0e-5\n"
                                "  lamb_bias_correction: false\n"),
                      "optim.lamb_bias_correction",
                      "x.yaml:4: optim.lamb_bias_correction (false) applies only to optim.type: "
                      "lamb, and optim.type is stable_adamw");
  EXPECT_CONFIG_ERROR(from_yaml("optim:\n  type: lamb\n", {"optim.stable_adamw_decouple_lr=false"}),
                      "optim.stable_adamw_decouple_lr",
                      "optim.stable_adamw_decouple_lr (false) applies only to optim.type: stable_adamw",
                      "(from --set 'optim.stable_adamw_decouple_lr=false')");
  // Its own keys, and another's at their defaults (as a dumped config holds them), load.
  const auto lamb = from_yaml("optim:\n  type: lamb\n  lamb_adapt_no_decay: true\n"
                              "  stable_adamw_decouple_lr: true\n");
  EXPECT_EQ(lamb.optim.type, OptimizerType::lamb);
  EXPECT_TRUE(lamb.optim.lamb_adapt_no_decay);
}

}  // namespace
}  // namespace mlm::config

// data.sources, a list of maps: read in block and flow style, unknown or mistyped keys inside
// an entry named by their path and line, validation, --set and the dump's round trip.
#include <gtest/gtest.h>

#include <cmath>

#include "config_test_util.h"
#include "mlm/config/validate.h"

namespace mlm::config {
namespace {

using testing::config_error_message;
using testing::fingerprint;

RunConfig sources_yaml(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_config_from_string(yaml, "x.yaml", overrides);
}

TEST(Sources, ReadsBlockAndFlowStyle) {
  const RunConfig block = sources_yaml(
      "data:\n"
      "  sources:\n"
      "    - files: [web/*.txt, web/extra.jsonl]\n"
      "      weight: 0.7\n"
      "    - store: prepared/books\n"
      "      weight: 0.3\n"
      "    - files: wiki.txt\n");
  ASSERT_EQ(block.data.sources.size(), 3u);
  EXPECT_EQ(block.data.sources[0].files, (std::vector<std::string>{"web/*.txt", "web/extra.jsonl"}));
  EXPECT_EQ(block.data.sources[0].weight, 0.7);
  EXPECT_EQ(block.data.sources[0].store, "");
  EXPECT_TRUE(block.data.sources[1].files.empty());
  EXPECT_EQ(block.data.sources[1].store, "prepared/books");
  EXPECT_EQ(block.data.sources[2].files, std::vector<std::string>{"wiki.txt"});
  EXPECT_EQ(block.data.sources[2].weight, 1.0);  // the default

  const RunConfig flow = sources_yaml(
      "data:\n  sources: [{files: [web/*.txt, web/extra.jsonl], weight: 0.7}, "
      "{store: prepared/books, weight: 0.3}, {files: wiki.txt}]\n");
  EXPECT_EQ(fingerprint(flow), fingerprint(block));
  EXPECT_TRUE(sources_yaml("data:\n  sources:\n").data.sources.empty());
  EXPECT_TRUE(sources_yaml("data:\n  sources: []\n").data.sources.empty());
}

TEST(Sources, UnknownKeyNamesItsPathLineAndNearMiss) {
  const std::string yaml =
      "data:\n"
      "  sources:\n"
      "    - files: [a.txt]\n"
      "      weight: 0.7\n"
      "    - files: [b.txt]\n"
      "      wieght: 0.3\n";
  EXPECT_CONFIG_ERROR(sources_yaml(yaml), "data.sources",
                      "x.yaml:6: data.sources[1].wieght: unknown key (did you mean 'weight'?); "
                      "an entry is a map with keys name, files, weight, store");
}

TEST(Sources, AllUnknownKeysAreListed) {
  const std::string yaml =
      "data:\n"
      "  sources:\n"
      "    - {fils: [a.txt], weight: 1}\n"
      "    - {files: [b.txt], frobnicate: 2}\n";
  EXPECT_CONFIG_ERROR(sources_yaml(yaml), "data.sources",
                      "x.yaml:3: data.sources: 2 unknown keys [0].fils (did you mean 'files'?), "
                      "[1].frobnicate; an entry is a map with keys name, files, weight, store");
}

TEST(Sources, WrongTypesNameTheEntryField) {
  EXPECT_CONFIG_ERROR(
      sources_yaml("data:\n  sources:\n    - files: [a.txt]\n      weight: heavy\n"),
      "data.sources", "x.yaml:4: data.sources[0].weight: expected a number, got 'heavy'");
  EXPECT_CONFIG_ERROR(
      sources_yaml("data:\n  sources:\n    - files: [a.txt]\n    - files: {x: 1}\n"),
      "data.sources", "x.yaml:4: data.sources[1].files: expected a list of strings, got a map");
  EXPECT_CONFIG_ERROR(sources_yaml("data:\n  sources:\n    - files: [a.txt]\n    - b.txt\n"),
                      "data.sources",
                      "x.yaml:4: data.sources[1]: expected a map with keys name, files, weight, "
                      "store, got 'b.txt'");
  EXPECT_CONFIG_ERROR(sources_yaml("data:\n  sources: a.txt\n"), "data.sources",
                      "x.yaml:2: data.sources: expected a list, each entry a map with keys "
                      "name, files, weight, store, got 'a.txt'");
  EXPECT_CONFIG_ERROR(
      sources_yaml("data:\n  sources:\n    - files: [a.txt]\n      weight: 1\n      weight: 2\n"),
      "data.sources", "x.yaml:5: data.sources[0].weight: is set twice in one entry");
  EXPECT_CONFIG_ERROR(sources_yaml("data:\n  sources: [{files: [a.txt], weight: .inf}]\n"),
                      "data.sources", "data.sources[0].weight: expected a finite number");
}

TEST(Sources, ValidationRules) {
  const auto with = [](const std::string& sources, const std::string& more = "") {
    return sources_yaml("data:\n  sources: " + sources + "\n" + more);
  };
  EXPECT_CONFIG_ERROR(with("[{files: [a.txt], weight: 1}, {files: [b.txt], weight: 0}]"),
                      "data.sources", "x.yaml:2: data.sources[1].weight (0) must be a finite "
                                      "number > 0");
  EXPECT_CONFIG_ERROR(with("[{files: [a.txt], weight: -0.5}]"), "data.sources",
                      "data.sources[0].weight (-0.5) must be a finite number > 0");
  EXPECT_CONFIG_ERROR(with("[{files: [a.txt]}, {weight: 2}]"), "data.sources",
                      "data.sources[1] has neither files nor store");
  EXPECT_CONFIG_ERROR(with("[{files: [a.txt, '']}]"), "data.sources",
                      "data.sources[0].files: item 2 is an empty string");
  const std::string both = config_error_message(
      [&] { with("[{files: [a.txt]}]", "  train_files: [c.txt]\n"); });
  EXPECT_NE(both.find("data.sources and data.train_files are both set"), std::string::npos)
      << both;
  EXPECT_NE(both.find("data.sources[i].files"), std::string::npos) << both;
  EXPECT_CONFIG_ERROR(with("[{files: [a.txt]}]", "  store: prepared\n"), "data.sources",
                      "data.sources and data.store are both set",
                      "data.sources[i].store");
  // Code-built configs reach the same checks.
  RunConfig config;
  config.data.sources = {{{"a.txt"}, std::nan(""), ""}};
  EXPECT_CONFIG_ERROR(validate_config(config), "data.sources",
                      "data.sources[0].weight (nan) must be a finite number > 0");
}

TEST(Sources, ASourceListIsTrainingData) {
  RunConfig config;
  EXPECT_THROW(require_training_data(config), ConfigError);
  config.data.sources = {{{"a.txt"}, 1.0, ""}};
  EXPECT_NO_THROW(require_training_data(config));
}

TEST(Sources, SetOverride) {
  const RunConfig config =
      sources_yaml("data:\n  seq_len: 64\n", {"data.sources=[{files: [a.txt], weight: 2}, "
                                           "{store: s, weight: 0.5}]"});
  ASSERT_EQ(config.data.sources.size(), 2u);
  EXPECT_EQ(config.data.sources[0].weight, 2.0);
  EXPECT_EQ(config.data.sources[1].store, "s");
  EXPECT_CONFIG_ERROR(sources_yaml("data:\n  seq_len: 64\n", {"data.sources=[{files: a, wieght: 2}]"}),
                      "data.sources",
                      "--set 'data.sources=[{files: a, wieght: 2}]': data.sources[0].wieght: "
                      "unknown key (did you mean 'weight'?)");
  // A validation error is pointed at the --set that caused it.
  EXPECT_CONFIG_ERROR(sources_yaml("data:\n  seq_len: 64\n", {"data.sources=[{weight: 2}]"}),
                      "data.sources", "data.sources[0] has neither files nor store",
                      "(from --set 'data.sources=[{weight: 2}]')");
}

TEST(Sources, DumpIsOneLineAndRoundTrips) {
  RunConfig config;
  config.data.sources = {{{"web/*.txt", "a, b: c.txt", "yes"}, 0.1 + 0.2, ""},
                         {{}, 1e-3, "prepared/\"quoted\" dir"},
                         {{"x.txt"}, 3.0, "s", "x"}};
  const std::string text = dump_config(config);
  EXPECT_NE(text.find("  sources: [{name: \"\", files: [web/*.txt, \"a, b: c.txt\", \"yes\"], weight: "
                      "0.30000000000000004, store: \"\"}, {name: \"\", files: [], weight: 0.001, store: "
                      "\"prepared/\\\"quoted\\\" dir\"}, {name: x, files: [x.txt], weight: 3.0, store: "
                      "s}]\n"),
            std::string::npos)
      << text;
  const RunConfig back = load_config_from_string(text, "<dump>");
  EXPECT_EQ(fingerprint(back), fingerprint(config));
  EXPECT_EQ(dump_config(back), text);
  EXPECT_NE(dump_config(RunConfig{}).find("  sources: []\n"), std::string::npos);
}

}  // namespace
}  // namespace mlm::config

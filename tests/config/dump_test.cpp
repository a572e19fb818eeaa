// dump_config: YAML that loads back into the identical config, doubles bit for bit and
// strings that YAML would otherwise read as something else.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "config_test_util.h"

namespace mlm::config {
namespace {

using testing::fingerprint;

RunConfig round_trip(const RunConfig& config) {
  return load_config_from_string(dump_config(config), "<dump>");
}

TEST(Dump, DefaultsRoundTrip) {
  const RunConfig defaults;
  EXPECT_EQ(fingerprint(round_trip(defaults)), fingerprint(defaults));
  EXPECT_EQ(dump_config(round_trip(defaults)), dump_config(defaults));
}

TEST(Dump, ListsEveryKnownKeyOnceInOrder) {
  const std::string text = dump_config(RunConfig{});
  std::vector<std::string> dumped;
  std::string section;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    if (line[0] != ' ') {
      section = line.substr(0, line.size() - 1);
    } else {
      dumped.push_back(section + "." + line.substr(2, line.find(':') - 2));
    }
  }
  EXPECT_EQ(dumped, known_keys());
}

TEST(Dump, LooksLikeYaml) {
  const std::string text = dump_config(RunConfig{});
  EXPECT_EQ(text.rfind("model:\n  vocab_size: 0\n  hidden_size: 768\n", 0), 0u) << text;
  EXPECT_NE(text.find("  layer_norm_eps: 1.0e-12\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  betas: [0.9, 0.999]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  timeout_s: 300.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  train_files: []\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  init_from: \"\"\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  format: auto\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  output_dir: runs/base\n"), std::string::npos) << text;
}

TEST(Dump, AwkwardDoublesRoundTripBitEqual) {
  const double values[] = {0.1 + 0.2,
                           1.0 / 3.0,
                           1e-300,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(),
                           -0.0,
                           123456789.125,
                           1e21,
                           2.5e-7};
  for (double value : values) {
    RunConfig config;
    config.train.max_time_s = value;
    config.model.layer_norm_eps = std::fabs(value) > 0 ? std::fabs(value) : 1e-12;
    config.optim.betas = {std::fmod(std::fabs(value), 1.0), 0.5};
    EXPECT_EQ(fingerprint(round_trip(config)), fingerprint(config))
        << value << "\n" << dump_config(config);
  }
}

TEST(Dump, AwkwardStringsRoundTrip) {
  const std::vector<std::string> strings = {
      "",          "true",        "False",       "null",       "~",        "yes",
      "123",       "1e5",         "0x1F",        ".inf",       "-dash",    "*star",
      "&anchor",   "!tag",        "%percent",    "@at",        "`tick",    "a: b",
      "a #b",      "#hash",       "with space",  " lead",      "trail ",   "quote\"s",
      "it's",      "back\\slash", "tab\there",   "new\nline",  "cr\rx",    "bell\x07",
      "\x7f",      "caf\xc3\xa9", "[bracket]",   "{brace}",    "x,y",      "a|b",
      "> fold",    "? q",         "- item",      "---",        "...",      "runs/a=b",
      "C:\\path",  "%YAML",       "=",           "<<",         "'single'", "data/*.txt"};
  for (const auto& text : strings) {
    RunConfig config;
    config.model.init_from = text;
    if (!text.empty()) {  // empty paths are invalid for these two
      config.train.output_dir = text;
      config.data.train_files = {text, "plain.txt", text};
    }
    const RunConfig back = round_trip(config);
    EXPECT_EQ(back.train.output_dir, config.train.output_dir) << dump_config(config);
    EXPECT_EQ(back.model.init_from, text);
    EXPECT_EQ(back.data.train_files, config.data.train_files);
  }
}

TEST(Dump, ExtremeIntegersAndEveryEnumValue) {
  RunConfig config;
  config.train.seed = std::numeric_limits<int64_t>::max();
  config.eval.seed = 0;
  config.train.max_tokens = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < EnumNames<DataFormat>::names.size(); ++i) {
    config.data.format = static_cast<DataFormat>(i);
    config.train.device = static_cast<DeviceKind>(i % EnumNames<DeviceKind>::names.size());
    config.masking.strategy =
        static_cast<MaskingStrategy>(i % EnumNames<MaskingStrategy>::names.size());
    config.schedule.decay = static_cast<DecayKind>(i % EnumNames<DecayKind>::names.size());
    config.logging.progress_bar =
        static_cast<ProgressBar>(i % EnumNames<ProgressBar>::names.size());
    EXPECT_EQ(fingerprint(round_trip(config)), fingerprint(config)) << dump_config(config);
  }
  // Negative integers are not valid for these keys, so check them on the text alone.
  config.train.threads = std::numeric_limits<int64_t>::min();
  EXPECT_NE(dump_config(config).find("threads: -9223372036854775808\n"), std::string::npos);
}

TEST(Dump, KnownKeysAreDottedAndUnique) {
  const auto keys = known_keys();
  EXPECT_GE(keys.size(), 80u);
  std::set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size());
  EXPECT_EQ(keys.front(), "model.vocab_size");
  for (const auto& key : keys) EXPECT_EQ(std::count(key.begin(), key.end(), '.'), 1) << key;
}

}  // namespace
}  // namespace mlm::config

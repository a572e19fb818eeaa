// dump_config: YAML that loads back into the identical config, doubles bit for bit and
// strings that YAML would otherwise read as something else.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

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

/// The dump as a YAML parser reads it: (section.key, the value re-emitted) in document order.
std::vector<std::pair<std::string, std::string>> yaml_entries(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  const YAML::Node root = YAML::Load(text);
  for (const auto& section : root) {
    for (const auto& entry : section.second) {
      out.emplace_back(section.first.as<std::string>() + "." + entry.first.as<std::string>(),
                       YAML::Dump(entry.second));
    }
  }
  return out;
}

/// Changes field number `target` (visit() order) to another value of its type and records
/// its dotted name; `fields` counts every field visited.
struct ChangeOneField {
  size_t target = 0;
  size_t fields = 0;
  std::string section_name, changed;

  template <class S>
  void section(const char* name, S& section) {
    section_name = name;
    section.visit(*this);
  }
  template <class T>
  void operator()(const char* name, T& value) {
    if (fields++ != target) return;
    change(value);
    changed = section_name + "." + name;
  }
  static void change(bool& v) { v = !v; }
  static void change(int64_t& v) { v += 7; }
  static void change(double& v) { v = v * 2 + 0.25; }
  static void change(std::string& v) { v += "x"; }
  static void change(std::vector<std::string>& v) { v.push_back("added.txt"); }
  static void change(std::array<double, 2>& v) { v[1] = v[1] / 2; }
  static void change(std::vector<SourceConfig>& v) { v.push_back({{"added/*.txt"}, 0.5, ""}); }
  static void change(KeySettings& v) { v.entries.emplace_back("added", "0.5"); }
  template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
  static void change(E& v) {
    v = static_cast<E>((static_cast<size_t>(v) + 1) % EnumNames<E>::names.size());
  }
};

// Read by a YAML parser, the dump has one entry per key the loader accepts (known_keys(), the
// unknown-key check's list), in order; and each field of RunConfig, changed alone, changes
// exactly one entry, the one named by that field's key, so no field is left out, printed
// twice or printed under another field's key.
TEST(Dump, EveryFieldIsTheOneEntryOfItsKey) {
  const auto keys = known_keys();
  const auto defaults = yaml_entries(dump_config(RunConfig{}));
  std::vector<std::string> dumped_keys;
  for (const auto& entry : defaults) dumped_keys.push_back(entry.first);
  EXPECT_EQ(dumped_keys, keys);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), keys.size()) << "a key twice";
  for (const auto& key : keys) EXPECT_EQ(std::count(key.begin(), key.end(), '.'), 1) << key;

  std::vector<int> hits(defaults.size(), 0);
  size_t fields = 0;
  for (size_t target = 0;; ++target) {
    RunConfig config;
    ChangeOneField change{target};
    config.visit(change);
    fields = change.fields;
    if (change.changed.empty()) break;
    const auto entries = yaml_entries(dump_config(config));
    ASSERT_EQ(entries.size(), defaults.size()) << change.changed;
    std::vector<size_t> differ;
    for (size_t i = 0; i < entries.size(); ++i) {
      ASSERT_EQ(entries[i].first, defaults[i].first);
      if (entries[i].second != defaults[i].second) differ.push_back(i);
    }
    ASSERT_EQ(differ.size(), 1u) << "changing " << change.changed << " changed " << differ.size()
                                 << " entries";
    EXPECT_EQ(entries[differ[0]].first, change.changed);
    ++hits[differ[0]];
  }
  EXPECT_EQ(fields, defaults.size());
  for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i], 1) << defaults[i].first;
}

TEST(Dump, LooksLikeYaml) {
  const std::string text = dump_config(RunConfig{});
  EXPECT_EQ(text.rfind("model:\n  architecture: bert\n  vocab_size: 0\n  hidden_size: 768\n", 0), 0u) << text;
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

TEST(Dump, WsdScheduleRoundTrips) {
  for (size_t shape = 0; shape < EnumNames<DecayShape>::names.size(); ++shape) {
    RunConfig config;
    config.schedule.decay = DecayKind::wsd;
    config.schedule.decay_steps = 1234;
    config.schedule.decay_ratio = 0.07;
    config.schedule.decay_shape = static_cast<DecayShape>(shape);
    const std::string text = dump_config(config);
    EXPECT_NE(text.find("  decay: wsd\n  decay_steps: 1234\n  decay_ratio: 0.07\n  decay_shape: " +
                        std::string(EnumNames<DecayShape>::names[shape]) + "\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(fingerprint(round_trip(config)), fingerprint(config)) << text;
  }
  // As a user writes it, and with --set.
  const RunConfig loaded = load_config_from_string(
      "schedule:\n  decay: wsd\n  decay_ratio: 0.2\n  decay_shape: linear\n", "w.yaml",
      {"schedule.decay_steps=300"});
  EXPECT_EQ(loaded.schedule.decay, DecayKind::wsd);
  EXPECT_EQ(loaded.schedule.decay_ratio, 0.2);
  EXPECT_EQ(loaded.schedule.decay_shape, DecayShape::linear);
  EXPECT_EQ(loaded.schedule.decay_steps, 300);
  EXPECT_EQ(fingerprint(round_trip(loaded)), fingerprint(loaded));
}

}  // namespace
}  // namespace mlm::config

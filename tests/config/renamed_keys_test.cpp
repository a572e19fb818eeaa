// A renamed key (src/config/renamed_keys.cpp) is still read under its old name, from the file
// and from --set, into the new key; both names at once are refused; the dump writes the new.
#include <gtest/gtest.h>

#include <algorithm>

#include "config_test_util.h"

namespace mlm::config::renamed_keys_test {
namespace {

RunConfig from_yaml(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return load_config_from_string(yaml, "x.yaml", overrides);
}

TEST(RenamedKeys, TheNewNameIsKnownAndTheOldIsNot) {
  const auto keys = known_keys();
  EXPECT_NE(std::find(keys.begin(), keys.end(), "tokenizer.regex_step_limit"), keys.end());
  EXPECT_EQ(std::find(keys.begin(), keys.end(), "tokenizer.regex_time_limit"), keys.end());
}

TEST(RenamedKeys, TheOldNameInAFileSetsTheNewKey) {
  EXPECT_EQ(from_yaml("tokenizer:\n  regex_step_limit: 7\n").tokenizer.regex_step_limit, 7);
  EXPECT_EQ(from_yaml("tokenizer:\n  regex_time_limit: 7\n").tokenizer.regex_step_limit, 7);
}

TEST(RenamedKeys, TheOldNameFromSetSetsTheNewKey) {
  const RunConfig config = from_yaml("tokenizer:\n  regex_step_limit: 7\n", {"tokenizer.regex_time_limit=9"});
  EXPECT_EQ(config.tokenizer.regex_step_limit, 9);
}

TEST(RenamedKeys, BothNamesInOneSectionAreRefused) {
  EXPECT_CONFIG_ERROR(from_yaml("tokenizer:\n  regex_step_limit: 7\n  regex_time_limit: 9\n"),
                      "tokenizer.regex_step_limit",
                      "x.yaml:3: tokenizer.regex_step_limit is set twice (first at line 2, here as "
                      "its old name tokenizer.regex_time_limit)");
}

TEST(RenamedKeys, ErrorsUnderTheOldNameNameTheNewKeyAndTheLine) {
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps: 3\ntokenizer:\n  regex_time_limit: -1\n"),
                      "tokenizer.regex_step_limit", "x.yaml:4: tokenizer.regex_step_limit (-1)");
  EXPECT_CONFIG_ERROR(from_yaml("train:\n  max_steps: 3\n", {"tokenizer.regex_time_limit=-1"}),
                      "tokenizer.regex_step_limit",
                      "(from --set 'tokenizer.regex_time_limit=-1')");
}

TEST(RenamedKeys, TheDumpWritesTheNewName) {
  const std::string dump = dump_config(from_yaml("tokenizer:\n  regex_time_limit: 7\n"));
  EXPECT_NE(dump.find("regex_step_limit: 7"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("regex_time_limit"), std::string::npos) << dump;
}

}  // namespace
}  // namespace mlm::config::renamed_keys_test

#include "mlm/dist/dist_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>

#include "mlm/util/errors.h"

namespace mlm::dist {
namespace {

using Vars = std::map<std::string, std::string>;

/// The variables of `vars` as the environment.
DistEnv from_map(const Vars& vars) {
  return DistEnv::from_lookup([&vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

Vars torchrun_vars() {
  return {{"RANK", "3"},          {"WORLD_SIZE", "4"},          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node-0.example"}, {"MASTER_PORT", "29500"}};
}

// The error must name the variable (and, for malformed values, the value).
void expect_usage_error(const Vars& vars, const std::string& must_mention) {
  try {
    from_map(vars);
    FAIL() << "expected a UsageError mentioning " << must_mention;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(must_mention), std::string::npos) << e.what();
  }
}

TEST(DistEnv, NoVariablesIsASingleProcess) {
  const auto env = from_map({});
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.local_rank, 0);
  EXPECT_FALSE(env.is_distributed());
  EXPECT_FALSE(env.use_agent_store);
}

TEST(DistEnv, MasterVariablesAloneStillMeanASingleProcess) {
  // Cluster profiles often export MASTER_ADDR/PORT for every job.
  const auto env = from_map({{"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
  EXPECT_EQ(env.world_size, 1);
}

TEST(DistEnv, ParsesTheTorchrunVariables) {
  auto vars = torchrun_vars();
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  vars["TORCHELASTIC_RESTART_COUNT"] = "2";
  const auto env = from_map(vars);
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 2);
  EXPECT_EQ(env.master_addr, "node-0.example");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_TRUE(env.use_agent_store);
  EXPECT_EQ(env.restart_count, 2);
  EXPECT_TRUE(env.is_distributed());
  EXPECT_EQ(env.describe(), "rank 3/4 (local 1/2), store node-0.example:29500 (launcher's)");
}

TEST(DistEnv, AgentStoreSpellings) {
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, bool>>{{"True", true}, {"1", true}, {"true", true},
                                                 {"False", false}, {"0", false}, {"", false}}) {
    auto vars = torchrun_vars();
    vars["TORCHELASTIC_USE_AGENT_STORE"] = text;
    EXPECT_EQ(from_map(vars).use_agent_store, expected) << text;
  }
  auto vars = torchrun_vars();
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "yes please";
  expect_usage_error(vars, "TORCHELASTIC_USE_AGENT_STORE='yes please'");
}

TEST(DistEnv, WorldSizeOneNeedsNoStore) {
  const auto env = from_map({{"RANK", "0"}, {"WORLD_SIZE", "1"}});
  EXPECT_EQ(env.world_size, 1);
  EXPECT_FALSE(env.is_distributed());
}

TEST(DistEnv, LocalRankDefaultsToZeroOnlyWithOneProcessPerNode) {
  auto vars = torchrun_vars();
  vars.erase("LOCAL_RANK");
  vars.erase("LOCAL_WORLD_SIZE");
  EXPECT_EQ(from_map(vars).local_rank, 0);
  vars["LOCAL_WORLD_SIZE"] = "2";
  expect_usage_error(vars, "LOCAL_RANK is not set");
}

// A launcher that sets LOCAL_RANK but not LOCAL_WORLD_SIZE: every rank of the job could share
// this node, so LOCAL_RANK=1 is accepted (it used to exit at once while rank 0 waited).
TEST(DistEnv, LocalWorldSizeDefaultsToTheWorldSizeWhenOnlyLocalRankIsSet) {
  auto vars = torchrun_vars();
  vars.erase("LOCAL_WORLD_SIZE");
  const auto env = from_map(vars);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_TRUE(env.local_world_size_assumed);
  EXPECT_FALSE(from_map(torchrun_vars()).local_world_size_assumed);
  vars["LOCAL_RANK"] = "4";
  expect_usage_error(vars, "LOCAL_RANK='4'");
}

TEST(DistEnv, PartialSetsNameTheMissingVariable) {
  expect_usage_error({{"RANK", "0"}}, "WORLD_SIZE is not set");
  expect_usage_error({{"WORLD_SIZE", "2"}}, "RANK is not set");
  expect_usage_error({{"LOCAL_RANK", "0"}}, "LOCAL_RANK is set but RANK and WORLD_SIZE are not");
  auto vars = torchrun_vars();
  vars.erase("MASTER_ADDR");
  expect_usage_error(vars, "MASTER_ADDR is not set");
  vars = torchrun_vars();
  vars.erase("MASTER_PORT");
  expect_usage_error(vars, "MASTER_PORT is not set");
}

TEST(DistEnv, MalformedValuesNameVariableAndValue) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"RANK", "x", "RANK='x'"},
      {"RANK", "-1", "RANK='-1'"},
      {"RANK", "4", "RANK='4'"},  // not below WORLD_SIZE
      {"RANK", " 1", "RANK=' 1'"},
      {"WORLD_SIZE", "0", "WORLD_SIZE='0'"},
      {"WORLD_SIZE", "99999999999", "WORLD_SIZE='99999999999'"},
      {"LOCAL_RANK", "2", "LOCAL_RANK='2'"},  // not below LOCAL_WORLD_SIZE
      {"LOCAL_WORLD_SIZE", "5", "LOCAL_WORLD_SIZE='5'"},  // more than WORLD_SIZE
      {"MASTER_PORT", "70000", "MASTER_PORT='70000'"},
      {"MASTER_PORT", "29500x", "MASTER_PORT='29500x'"},
      {"MASTER_ADDR", "", "MASTER_ADDR is empty"},
      {"TORCHELASTIC_RESTART_COUNT", "one", "TORCHELASTIC_RESTART_COUNT='one'"},
  };
  for (const auto& [name, value, message] : cases) {
    auto vars = torchrun_vars();
    vars[name] = value;
    SCOPED_TRACE(name + "=" + value);
    expect_usage_error(vars, message);
  }
}

TEST(DistEnv, ReadsTheProcessEnvironment) {
  const std::vector<std::string> names = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                          "MASTER_ADDR", "MASTER_PORT"};
  std::map<std::string, std::optional<std::string>> saved;
  for (const auto& name : names) {
    const char* value = std::getenv(name.c_str());
    saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
  }
  for (const auto& [name, value] : torchrun_vars()) setenv(name.c_str(), value.c_str(), 1);
  const auto env = DistEnv::from_environment();
  for (const auto& [name, value] : saved) {
    if (value) {
      setenv(name.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.master_port, 29500);
}

}  // namespace
}  // namespace mlm::dist

// A rank that dies or hangs must make the others fail with a clear error within
// distributed.timeout_s, never hang.
#include <gtest/gtest.h>
#include <signal.h>

#include "dist/multi_rank.h"
#include "mlm/dist/communicator.h"

namespace mlm::dist {
namespace {

constexpr double kTimeoutS = 3;

// The victim (MLM_DIST_VICTIM) kills or stops itself (MLM_DIST_HOW) after one good
// all-reduce; the survivors keep reducing. They must throw; the exception ends their test,
// so their process exits 1, as mlm-train's main() would.
MLM_DIST_SCENARIO(lose_a_rank) {
  config::DistributedConfig config;
  config.backend = config::DistBackend::gloo;
  config.timeout_s = testing::scenario_timeout_s();
  auto comm = Communicator::create(env, config, torch::kCPU);
  auto t = torch::ones({1000});
  comm->all_reduce_sum(t);
  ASSERT_EQ(t[0].item<float>(), comm->world_size());
  if (comm->rank() == std::stoi(std::getenv("MLM_DIST_VICTIM"))) {
    raise(std::string(std::getenv("MLM_DIST_HOW")) == "kill" ? SIGKILL : SIGSTOP);
  }
  for (int i = 0; i < 100000; ++i) comm->all_reduce_sum(t);
  FAIL() << "the collectives kept succeeding without the victim";
}

struct Loss {
  int victim;
  const char* how;
};
void PrintTo(const Loss& loss, std::ostream* out) { *out << loss.how << " rank " << loss.victim; }

class LoseARank : public ::testing::TestWithParam<Loss> {};

TEST_P(LoseARank, SurvivorExitsNonZeroWithinTheTimeout) {
  const Loss loss = GetParam();
  testing::LaunchOptions options;
  options.timeout_s = kTimeoutS;
  options.deadline_s = 30;
  options.env["MLM_DIST_VICTIM"] = std::to_string(loss.victim);
  options.env["MLM_DIST_HOW"] = loss.how;
  const auto results = testing::run_ranks("lose_a_rank", options);
  const auto& victim = results[loss.victim];
  const auto& survivor = results[1 - loss.victim];
  if (std::string(loss.how) == "kill") {
    EXPECT_EQ(victim.signal, SIGKILL) << victim.summary();
  } else {
    EXPECT_TRUE(victim.was_stopped) << victim.summary();
  }
  EXPECT_FALSE(survivor.timed_out) << survivor.summary();
  EXPECT_EQ(survivor.exit_code, 1) << survivor.summary();
  EXPECT_NE(survivor.output.find("a collective failed"), std::string::npos) << survivor.summary();
  EXPECT_NE(survivor.output.find("distributed.timeout_s=3"), std::string::npos)
      << survivor.summary();
  // A death is seen at once (the connection closes); a hang after the timeout. Either way
  // the survivor is gone within the timeout plus a margin for exiting on a busy machine.
  const double waited = survivor.end_s - victim.end_s;
  EXPECT_LT(waited, kTimeoutS + 3) << survivor.summary();
  if (std::string(loss.how) == "stop") {  // nothing closed: only the timeout can tell
    EXPECT_GT(waited, kTimeoutS - 0.5) << survivor.summary();
  }
  std::printf("victim rank %d (%s): survivor exited %.2f s later\n", loss.victim, loss.how, waited);
}

INSTANTIATE_TEST_SUITE_P(Dist, LoseARank,
                         ::testing::Values(Loss{1, "kill"}, Loss{0, "kill"}, Loss{1, "stop"}),
                         [](const auto& info) {
                           return std::string(info.param.how) + "_rank" +
                                  std::to_string(info.param.victim);
                         });

}  // namespace
}  // namespace mlm::dist

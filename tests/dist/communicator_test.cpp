// Communicator: world size 1 no-ops in process, real collectives across ranks over loopback.
#include "mlm/dist/communicator.h"

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>

#include "dist/multi_rank.h"
#include "mlm/util/errors.h"

namespace mlm::dist {
namespace {

using testing::LaunchOptions;
using testing::run_ranks;

config::DistributedConfig test_config() {
  config::DistributedConfig config;
  config.backend = config::DistBackend::gloo;
  config.timeout_s = testing::scenario_timeout_s();
  return config;
}

void expect_all_ranks_pass(const std::vector<testing::RankResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << ": " << results[r].summary();
  }
}

// ---- world size 1 ---------------------------------------------------------------------

TEST(Communicator, WorldSizeOneIsANoOp) {
  auto comm = Communicator::create(DistEnv{}, config::DistributedConfig{}, torch::kCPU);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->world_size(), 1);
  EXPECT_TRUE(comm->is_main());
  EXPECT_EQ(comm->backend_name(), "none");
  auto t = torch::arange(6, torch::kFloat32).reshape({2, 3});
  const auto before = t.clone();
  comm->all_reduce_sum(t);
  EXPECT_TRUE(torch::equal(t, before));
  std::vector<torch::Tensor> list{t, torch::ones({2}, torch::kInt64)};
  comm->all_reduce_sum(list);
  comm->broadcast(list, 0);
  EXPECT_TRUE(torch::equal(list[0], before));
  EXPECT_EQ(comm->all_gather_strings("pos"), std::vector<std::string>{"pos"});
  comm->barrier();
}

TEST(Communicator, RejectsBadConfigBeforeConnecting) {
  config::DistributedConfig config;
  config.timeout_s = 0;
  EXPECT_THROW(Communicator::create(DistEnv{}, config, torch::kCPU), ConfigError);
  config = {};
  config.backend = config::DistBackend::nccl;
  try {
    Communicator::create(DistEnv{}, config, torch::kCPU);
    FAIL() << "nccl on the CPU must be refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "distributed.backend");
  }
}

TEST(Communicator, RendezvousWithMissingRanksTimesOut) {
  DistEnv env;
  env.world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = testing::free_port();
  config::DistributedConfig config;
  config.timeout_s = 1;
  const auto start = std::chrono::steady_clock::now();
  try {
    Communicator::create(env, config, torch::kCPU);  // rank 1 never comes
    FAIL() << "expected a DistributedError";
  } catch (const DistributedError& e) {
    EXPECT_NE(std::string(e.what()).find("could not join the gloo process group"),
              std::string::npos)
        << e.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);  // store wait + group rendezvous, each bounded by the timeout
}

// ---- several ranks --------------------------------------------------------------------

// Values are small integers, so sums are exact whatever order a ring adds them in.
MLM_DIST_SCENARIO(collectives) {
  auto comm = Communicator::create(env, test_config(), torch::kCPU);
  const int n = comm->world_size();
  const int r = comm->rank();
  ASSERT_EQ(r, env.rank);
  EXPECT_EQ(comm->is_main(), r == 0);
  EXPECT_EQ(comm->backend_name(), "gloo");

  // One tensor, not contiguous: summed in place.
  auto base = torch::arange(12, torch::kFloat32).reshape({3, 4}) * (r + 1);
  auto t = base.t();
  comm->all_reduce_sum(t);
  const double rank_factor = n * (n + 1) / 2.0;
  EXPECT_TRUE(torch::equal(base, torch::arange(12, torch::kFloat32).reshape({3, 4}) * rank_factor));

  // A list of shapes and dtypes.
  std::vector<torch::Tensor> list{torch::full({2, 3}, r, torch::kFloat32),
                                  torch::full({5}, r + 10, torch::kInt64),
                                  torch::full({1}, 0.5 * r, torch::kFloat64),
                                  torch::full({4, 1}, 2 * r, torch::kFloat32)};
  comm->all_reduce_sum(list);
  const double sum_r = n * (n - 1) / 2.0;
  EXPECT_TRUE(torch::equal(list[0], torch::full({2, 3}, sum_r, torch::kFloat32)));
  EXPECT_TRUE(torch::equal(list[1], torch::full({5}, sum_r + 10 * n, torch::kInt64)));
  EXPECT_TRUE(torch::equal(list[2], torch::full({1}, 0.5 * sum_r, torch::kFloat64)));
  EXPECT_TRUE(torch::equal(list[3], torch::full({4, 1}, 2 * sum_r, torch::kFloat32)));

  // Broadcast from the last rank, into a parameter that requires grad.
  const int root = n - 1;
  auto param = torch::full({3, 2}, r, torch::kFloat32).requires_grad_(true);
  std::vector<torch::Tensor> to_share{param, torch::full({2}, 100 + r, torch::kInt64)};
  comm->broadcast(to_share, root);
  EXPECT_TRUE(torch::equal(param.detach(), torch::full({3, 2}, root, torch::kFloat32)));
  EXPECT_TRUE(param.requires_grad());
  EXPECT_TRUE(torch::equal(to_share[1], torch::full({2}, 100 + root, torch::kInt64)));

  // Host numbers (counts, flags) summed on the host group while a reduction of the device
  // group is still in flight, as the step's counts are while the gradients' buckets reduce.
  auto bucket = torch::full({1000}, static_cast<double>(r + 1), torch::kFloat32);
  comm->start_all_reduce_sum(bucket);
  const auto counts = comm->sum_across_ranks({1.0 * r, 3.0, 1e15 + r});
  comm->wait_all();
  EXPECT_EQ(counts, (std::vector<double>{sum_r, 3.0 * n, 1e15 * n + sum_r}));
  EXPECT_TRUE(torch::equal(bucket, torch::full({1000}, rank_factor, torch::kFloat32)));
  EXPECT_TRUE(comm->sum_across_ranks({}).empty());

  // Strings of different lengths, one empty, one with NUL bytes.
  std::string mine = r == 0 ? std::string() : std::string(static_cast<size_t>(r) * 7, 'a' + r);
  if (r == 1) mine += std::string("\0z", 2);
  const auto all = comm->all_gather_strings(mine);
  ASSERT_EQ(all.size(), static_cast<size_t>(n));
  for (int other = 0; other < n; ++other) {
    std::string want = other == 0 ? std::string()
                                  : std::string(static_cast<size_t>(other) * 7, 'a' + other);
    if (other == 1) want += std::string("\0z", 2);
    EXPECT_EQ(all[other], want) << "string of rank " << other;
  }
  comm->barrier();
}

TEST(Communicator, CollectivesAcrossTwoRanks) {
  expect_all_ranks_pass(run_ranks("collectives", LaunchOptions{}));
}

// Three ranks (a ring longer than two), with rank 0 connecting to a store the launcher hosts
// (torchrun's agent) under the restart prefix.
TEST(Communicator, CollectivesAcrossThreeRanksThroughTheLaunchersStore) {
  LaunchOptions options;
  options.world_size = 3;
  options.start_store = true;
  options.env["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  options.env["TORCHELASTIC_RESTART_COUNT"] = "3";
  expect_all_ranks_pass(run_ranks("collectives", options));
}

}  // namespace
}  // namespace mlm::dist

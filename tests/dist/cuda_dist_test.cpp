// NCCL across two GPUs of this machine: the same collectives as the Gloo scenario, on CUDA
// tensors. Skipped without two CUDA devices (and without a CUDA build).
#include <gtest/gtest.h>

#include "cuda_skip.h"
#include "dist/multi_rank.h"
#include "mlm/dist/communicator.h"

namespace mlm::dist {
namespace {

MLM_DIST_SCENARIO(nccl_collectives) {
  config::DistributedConfig config;
  config.backend = config::DistBackend::nccl;
  config.timeout_s = testing::scenario_timeout_s();
  const torch::Device cuda(torch::kCUDA, env.local_rank);
  auto comm = Communicator::create(env, config, cuda);
  ASSERT_EQ(comm->backend_name(), "nccl");
  const int n = comm->world_size(), r = comm->rank();
  auto t = torch::arange(12, torch::TensorOptions().dtype(torch::kFloat32).device(cuda)) * (r + 1);
  comm->all_reduce_sum(t);
  const double factor = n * (n + 1) / 2.0;
  EXPECT_TRUE(torch::equal(t.cpu(), torch::arange(12, torch::kFloat32) * factor));
  std::vector<torch::Tensor> list{torch::full({3}, static_cast<double>(r), torch::TensorOptions().device(cuda))};
  comm->broadcast(list, 1);
  EXPECT_TRUE(torch::equal(list[0].cpu(), torch::full({3}, 1.0)));
#ifdef MLM_WITH_CUDA
  // Host numbers go through the host's own (Gloo) group: no read of the GPU, so a step's
  // counts never wait for the work queued before them.
  std::vector<double> counts;
  std::string gathered;
  {
    const mlm::testing::NoDeviceSyncs no_syncs;
    counts = comm->sum_across_ranks({1.0 * r, 2.0});
    gathered = comm->all_gather_strings("rank" + std::to_string(r)).at(1);
    comm->barrier();
  }
  EXPECT_EQ(counts, (std::vector<double>{n * (n - 1) / 2.0, 2.0 * n}));
  EXPECT_EQ(gathered, "rank1");
#endif
}

TEST(CudaDist, NcclCollectivesAcrossTwoGpus) {
#ifndef MLM_WITH_CUDA
  GTEST_SKIP() << "this LibTorch has no CUDA, so no NCCL backend";
#endif
  MLM_SKIP_WITHOUT_CUDA_DEVICES(2);
  testing::LaunchOptions options;
  options.world_size = 2;
  for (const auto& result : testing::run_ranks("nccl_collectives", options))
    EXPECT_EQ(result.exit_code, 0) << result.summary();
}

}  // namespace
}  // namespace mlm::dist

#include "mlm/dist/gradient_reducer.h"

#include <gtest/gtest.h>

#include "dist/multi_rank.h"
#include "mlm/util/errors.h"

namespace mlm::dist {
namespace {

torch::Tensor param(std::vector<int64_t> sizes, torch::Dtype dtype = torch::kFloat32) {
  return torch::zeros(sizes, dtype).requires_grad_(true);
}

TEST(PlanBuckets, FillsUpToTheLimitSplitsByDtypeAndIsolatesLargeTensors) {
  // 400 B, 400 B, 400 B (fits 1000 B twice), 4000 B alone, then a double tensor.
  std::vector<torch::Tensor> params{param({100}), param({100}), param({100}), param({1000}),
                                    param({10}, torch::kFloat64), param({10})};
  const auto buckets = plan_buckets(params, 1000);
  ASSERT_EQ(buckets.size(), 5u);
  EXPECT_EQ(buckets[0].params, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(buckets[0].numel, 200);
  EXPECT_EQ(buckets[1].params, (std::vector<size_t>{2}));
  EXPECT_EQ(buckets[2].params, (std::vector<size_t>{3}));
  EXPECT_EQ(buckets[3].params, (std::vector<size_t>{4}));
  EXPECT_EQ(buckets[3].dtype, torch::kFloat64);
  EXPECT_EQ(buckets[4].params, (std::vector<size_t>{5}));
  EXPECT_EQ(buckets[4].dtype, torch::kFloat32);
}

TEST(GradientReducer, WorldSizeOneLeavesGradientsAlone) {
  auto p = param({3});
  p.mutable_grad() = torch::ones({3});
  GradientReducer reducer(Communicator::single_process(), {p}, 25);
  reducer.reduce();
  EXPECT_TRUE(torch::equal(p.grad(), torch::ones({3})));
  EXPECT_EQ(reducer.num_buckets(), 0u);
}

TEST(GradientReducer, RejectsBucketSizeBelowOneMegabyte) {
  try {
    GradientReducer(Communicator::single_process(), {param({3})}, 0);
    FAIL() << "bucket_mb 0 must be refused";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "distributed.bucket_mb");
  }
}

// Rank r's gradient of parameter i, reproducible on every rank.
torch::Tensor rank_grad(int rank, size_t i, const torch::Tensor& p) {
  torch::manual_seed(1000 * rank + static_cast<int64_t>(i));
  return torch::randn(p.sizes(), torch::TensorOptions().dtype(p.scalar_type()));
}

// ~3.6 MB of float parameters in 1 MB buckets (several buckets, one tensor larger than a
// bucket), a double one, a frozen one, a tied one listed twice and one whose gradient only
// rank 0 has. The bucketed sums must equal per-tensor sums bit for bit (two ranks: a+b).
MLM_DIST_SCENARIO(reducer) {
  config::DistributedConfig config;
  config.backend = config::DistBackend::gloo;
  config.timeout_s = testing::scenario_timeout_s();
  auto comm = Communicator::create(env, config, torch::kCPU);
  const int r = comm->rank();
  std::vector<torch::Tensor> params{param({300, 300}), param({70000}), param({512, 1024}),
                                    param({64}),       param({50}, torch::kFloat64),
                                    param({100, 100}), param({33})};
  auto frozen = torch::zeros({10});
  auto tied = params[0];
  const size_t no_grad_on_rank1 = 6;
  for (size_t i = 0; i < params.size(); ++i) {
    if (i == no_grad_on_rank1 && r == 1) continue;
    params[i].mutable_grad() = rank_grad(r, i, params[i]);
  }
  std::vector<torch::Tensor> expected;
  for (size_t i = 0; i < params.size(); ++i) {
    auto g = params[i].grad().defined() ? params[i].grad().clone() : torch::zeros_like(params[i]);
    comm->all_reduce_sum(g);
    expected.push_back(g);
  }

  auto listed = params;
  listed.push_back(frozen);
  listed.push_back(tied);
  GradientReducer reducer(comm, listed, /*bucket_mb=*/1);
  EXPECT_GE(reducer.num_buckets(), 4u);
  for (int step = 0; step < 2; ++step) {  // buffers are reused: a second step must agree too
    if (step == 1) {
      for (size_t i = 0; i < params.size(); ++i) {
        params[i].mutable_grad() = rank_grad(r, i, params[i]);
        if (i == no_grad_on_rank1 && r == 1) params[i].mutable_grad() = torch::Tensor();
      }
    }
    reducer.reduce();
    for (size_t i = 0; i < params.size(); ++i) {
      ASSERT_TRUE(params[i].grad().defined()) << "parameter " << i;
      EXPECT_TRUE(torch::equal(params[i].grad(), expected[i]))
          << "step " << step << ", parameter " << i << ": max difference "
          << (params[i].grad() - expected[i]).abs().max().item<double>();
    }
    EXPECT_FALSE(frozen.grad().defined());
  }
}

TEST(GradientReducer, BucketedSumsEqualPerTensorSumsAcrossTwoRanks) {
  const auto results = testing::run_ranks("reducer", testing::LaunchOptions{});
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << ": " << results[r].summary();
  }
}

}  // namespace
}  // namespace mlm::dist

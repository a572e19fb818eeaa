#include "mlm/dist/gradient_reducer.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <iterator>

#include "dist/multi_rank.h"
#include "mlm/util/errors.h"

namespace mlm::dist {
namespace {

torch::Tensor param(std::vector<int64_t> sizes, torch::Dtype dtype = torch::kFloat32) {
  return torch::zeros(sizes, dtype).requires_grad_(true);
}

TEST(PlanBuckets, TakesParametersInReverseFillsUpToTheLimitSplitsByDtypeAndIsolatesLargeOnes) {
  // From the last: a float tensor, a double one (a new bucket), 4000 B alone, then 400 B +
  // 400 B (fits 1000 B) and 400 B more in the next bucket.
  std::vector<torch::Tensor> params{param({100}), param({100}), param({100}), param({1000}),
                                    param({10}, torch::kFloat64), param({10})};
  const auto buckets = plan_buckets(params, 1000);
  ASSERT_EQ(buckets.size(), 5u);
  EXPECT_EQ(buckets[0].params, (std::vector<size_t>{5}));
  EXPECT_EQ(buckets[0].dtype, torch::kFloat32);
  EXPECT_EQ(buckets[1].params, (std::vector<size_t>{4}));
  EXPECT_EQ(buckets[1].dtype, torch::kFloat64);
  EXPECT_EQ(buckets[2].params, (std::vector<size_t>{3}));
  EXPECT_EQ(buckets[3].params, (std::vector<size_t>{2, 1}));
  EXPECT_EQ(buckets[3].numel, 200);
  EXPECT_EQ(buckets[4].params, (std::vector<size_t>{0}));
}

TEST(GradientReducer, WorldSizeOneLeavesGradientsAlone) {
  auto p = param({3});
  p.mutable_grad() = torch::ones({3});
  GradientReducer reducer(Communicator::single_process(), {p}, 25);
  reducer.prepare_for_backward(p * 2);
  reducer.finish();
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
    reducer.finish();
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

// The overlap scenario's model, from raw tensors: a tied embedding (looked up at the input
// and reused as the output projection: one accumulator), a stack of 256x256 layers (~3.3 MB
// in all: several 1 MB buckets), a layer only rank 0 uses and one that rank 1 uses only in
// the first micro-batch (outside the last backward's graph: its gradient is final at once).
constexpr int64_t kOverlapVocab = 1000, kOverlapWidth = 256, kOverlapEmbed = 128;

struct OverlapModel {
  torch::Tensor embed, proj_in, rank0_only, early_only_on_rank1, proj_out;
  std::vector<torch::Tensor> layers, biases;

  OverlapModel() {
    torch::manual_seed(4242);  // the same weights on every rank
    auto weight = [](std::vector<int64_t> sizes) {
      return (torch::randn(sizes) * 0.05).requires_grad_(true);
    };
    embed = weight({kOverlapVocab, kOverlapEmbed});
    proj_in = weight({kOverlapEmbed, kOverlapWidth});
    for (int i = 0; i < 8; ++i) {
      layers.push_back(weight({kOverlapWidth, kOverlapWidth}));
      biases.push_back(weight({kOverlapWidth}));
    }
    rank0_only = weight({kOverlapWidth, kOverlapWidth});
    early_only_on_rank1 = weight({kOverlapWidth, kOverlapWidth});
    proj_out = weight({kOverlapWidth, kOverlapEmbed});
  }

  // Registration order, as a model lists them; the middle ones sit between layers 3 and 4.
  std::vector<torch::Tensor> parameters() const {
    std::vector<torch::Tensor> out{embed, proj_in};
    for (size_t i = 0; i < layers.size(); ++i) {
      if (i == 4) {
        out.push_back(rank0_only);
        out.push_back(early_only_on_rank1);
      }
      out.push_back(layers[i]);
      out.push_back(biases[i]);
    }
    out.push_back(proj_out);
    return out;
  }

  // Summed cross-entropy of predicting `targets` from `ids`, scaled; `on_input_grad` runs
  // inside backward when the embedding output's gradient is ready, i.e. after every other
  // parameter's and before the embedding's own.
  torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets, bool use_rank0_only,
                     bool use_early_only, const std::function<void()>& on_input_grad) const {
    auto x = embed.index_select(0, ids);
    x.register_hook([on_input_grad](const torch::Tensor&) { on_input_grad(); });
    auto h = torch::tanh(x.mm(proj_in));
    for (size_t i = 0; i < layers.size(); ++i) {
      if (i == 4 && use_rank0_only) h = h + torch::tanh(h.mm(rank0_only));
      if (i == 4 && use_early_only) h = h + torch::tanh(h.mm(early_only_on_rank1));
      h = torch::tanh(h.mm(layers[i]) + biases[i]);
    }
    const auto logits = h.mm(proj_out).mm(embed.t());
    return torch::nn::functional::cross_entropy(
               logits, targets,
               torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
           1000.0;
  }
};

enum class WhenReduced { never, after_backward, overlapped };

struct OverlapStep {
  std::vector<torch::Tensor> grads;  // per parameter (undefined: none)
  size_t started_at_input_grad = 0;  // buckets started when the embedding output's grad was ready
};

// Two micro-batches of this rank's data (gradient accumulation), then the reduction `how`.
OverlapStep overlap_step(const OverlapModel& model, GradientReducer& reducer, int rank,
                         WhenReduced how) {
  const auto params = model.parameters();
  for (auto p : params) p.mutable_grad() = torch::Tensor();
  OverlapStep step;
  for (int micro = 0; micro < 2; ++micro) {
    torch::manual_seed(100 * rank + micro);
    const auto ids = torch::randint(kOverlapVocab, {64}, torch::kInt64);
    const auto targets = torch::randint(kOverlapVocab, {64}, torch::kInt64);
    const bool last = micro == 1;
    auto on_input_grad = [&] {
      if (last) step.started_at_input_grad = reducer.buckets_started();
    };
    const auto loss = model.loss(ids, targets, rank == 0, rank == 0 || micro == 0, on_input_grad);
    if (last && how == WhenReduced::overlapped) reducer.prepare_for_backward(loss);
    loss.backward();
  }
  if (how != WhenReduced::never) reducer.finish();
  for (const auto& p : params) step.grads.push_back(p.grad().defined() ? p.grad().clone() : p.grad());
  return step;
}

// Overlapped with the last of two micro-batches' backward, the bucketed sums equal the sums
// reduced after backward and per-tensor sums, bit for bit, with a tied weight, a parameter
// unused on rank 1 and one unused in rank 1's last micro-batch; and buckets did start before
// the backward pass ended.
MLM_DIST_SCENARIO(reducer_overlap) {
  torch::set_num_threads(1);
  config::DistributedConfig config;
  config.backend = config::DistBackend::gloo;
  config.timeout_s = testing::scenario_timeout_s();
  auto comm = Communicator::create(env, config, torch::kCPU);
  const int r = comm->rank();
  const OverlapModel model;
  auto listed = model.parameters();
  listed.push_back(model.embed);  // tied: listed twice, reduced once
  listed.push_back(torch::zeros({10}));  // frozen: not reduced
  GradientReducer reducer(comm, listed, /*bucket_mb=*/1);
  ASSERT_GE(reducer.num_buckets(), 3u);

  auto expected = overlap_step(model, reducer, r, WhenReduced::never).grads;
  for (auto& g : expected) {
    if (!g.defined()) g = torch::zeros_like(model.rank0_only);  // only rank0_only lacks one
    comm->all_reduce_sum(g);
  }
  const auto params = model.parameters();
  std::vector<torch::Tensor> after_backward;
  const WhenReduced order[] = {WhenReduced::after_backward, WhenReduced::overlapped,
                               WhenReduced::overlapped, WhenReduced::after_backward};
  for (size_t run = 0; run < std::size(order); ++run) {
    const bool overlapped = order[run] == WhenReduced::overlapped;
    SCOPED_TRACE(fmt::format("run {} ({})", run, overlapped ? "overlapped" : "after backward"));
    const auto step = overlap_step(model, reducer, r, order[run]);
    if (overlapped) {
      // Every bucket but the embedding's (the last: it holds the first parameters) had
      // started by then.
      EXPECT_GE(step.started_at_input_grad, 1u);
      EXPECT_LT(step.started_at_input_grad, reducer.num_buckets());
    } else {
      EXPECT_EQ(step.started_at_input_grad, 0u);
    }
    if (run == 0) after_backward = step.grads;
    for (size_t i = 0; i < params.size(); ++i) {
      ASSERT_TRUE(step.grads[i].defined()) << "parameter " << i;
      EXPECT_TRUE(torch::equal(step.grads[i], expected[i]))
          << "parameter " << i << ": max difference "
          << (step.grads[i] - expected[i]).abs().max().item<double>();
      EXPECT_TRUE(torch::equal(step.grads[i], after_backward[i])) << "parameter " << i;
    }
  }
  EXPECT_EQ(reducer.buckets_started(), 0u);  // idle again after finish()
}

TEST(GradientReducer, OverlappedSumsEqualSumsAfterBackwardAcrossTwoRanks) {
  const auto results = testing::run_ranks("reducer_overlap", testing::LaunchOptions{});
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << ": " << results[r].summary();
  }
}

}  // namespace
}  // namespace mlm::dist

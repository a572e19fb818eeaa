// The data-parallel contract on a small model: 2 ranks x micro-batch B, gradients summed by
// GradientReducer and the loss divided by the global masked-token count (all-reduced), take
// the same optimizer steps as one process with micro-batch 2B; so does 2 ranks x B/2 x 2
// accumulation steps. (The mlm-train end-to-end version needs identical global batches from
// the data pipeline; this pins down the part that belongs to src/dist.)
#include <gtest/gtest.h>

#include "dist/multi_rank.h"
#include "mlm/dist/gradient_reducer.h"

namespace mlm::dist {
namespace {

constexpr int64_t kVocab = 50, kSeq = 8, kGlobalBatch = 8, kSteps = 5;

struct TinyMlmImpl : torch::nn::Module {
  TinyMlmImpl() {
    embed = register_module("embed", torch::nn::Embedding(kVocab, 16));
    hidden = register_module("hidden", torch::nn::Linear(16, 32));
    head = register_module("head", torch::nn::Linear(32, kVocab));
  }
  // Summed cross-entropy over the labelled (masked) positions.
  torch::Tensor loss_sum(const torch::Tensor& ids, const torch::Tensor& labels) {
    auto logits = head(torch::tanh(hidden(embed(ids))));
    return torch::nn::functional::cross_entropy(
        logits.reshape({-1, kVocab}), labels.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100).reduction(torch::kSum));
  }
  torch::nn::Embedding embed{nullptr};
  torch::nn::Linear hidden{nullptr}, head{nullptr};
};
TORCH_MODULE(TinyMlm);

struct Batch {
  torch::Tensor ids, labels;
};

// The global batch of a step: ids and labels with a random ~30% of positions labelled, so
// ranks and micro-batches hold different masked counts.
Batch global_batch(int64_t step) {
  torch::manual_seed(7000 + step);
  auto ids = torch::randint(kVocab, {kGlobalBatch, kSeq}, torch::kInt64);
  auto masked = torch::rand({kGlobalBatch, kSeq}) < 0.3;
  auto labels = torch::where(masked, ids, torch::full_like(ids, -100));
  return {ids, labels};
}

TinyMlm fresh_model() {
  torch::manual_seed(42);  // every rank and the reference start from the same weights
  return TinyMlm();
}

// SGD, not Adam: its step is linear in the gradient, so a gradient off by any factor (an
// average where a sum belongs, a rank counted twice) shows in the weights.
torch::optim::SGD make_optimizer(TinyMlm& model) {
  return torch::optim::SGD(model->parameters(), torch::optim::SGDOptions(0.5).momentum(0.9));
}

double masked_count(const torch::Tensor& labels) {
  return (labels != -100).sum().item<double>();
}

// Rows [begin, end) of the global batch, split into `accum` equal micro-batches.
std::vector<Batch> micro_batches(const Batch& b, int64_t begin, int64_t end, int64_t accum) {
  std::vector<Batch> out;
  const int64_t size = (end - begin) / accum;
  for (int64_t m = 0; m < accum; ++m) {
    const int64_t from = begin + m * size;
    out.push_back({b.ids.slice(0, from, from + size), b.labels.slice(0, from, from + size)});
  }
  return out;
}

// One process over the whole global batch: the reference.
std::vector<double> train_reference(TinyMlm& model) {
  auto optimizer = make_optimizer(model);
  std::vector<double> losses;
  for (int64_t step = 0; step < kSteps; ++step) {
    const auto b = global_batch(step);
    optimizer.zero_grad();
    auto loss = model->loss_sum(b.ids, b.labels) / masked_count(b.labels);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

// This rank's share of every global batch, `accum` micro-batches per step.
std::vector<double> train_data_parallel(TinyMlm& model, Communicator& comm,
                                        const std::shared_ptr<Communicator>& shared, int64_t accum) {
  auto optimizer = make_optimizer(model);
  GradientReducer reducer(shared, model->parameters(), 1);
  const int64_t per_rank = kGlobalBatch / comm.world_size();
  std::vector<double> losses;
  for (int64_t step = 0; step < kSteps; ++step) {
    const auto micro = micro_batches(global_batch(step), comm.rank() * per_rank,
                                     (comm.rank() + 1) * per_rank, accum);
    auto count = torch::zeros({1}, torch::kFloat64);
    for (const auto& m : micro) count += masked_count(m.labels);
    comm.all_reduce_sum(count);  // the global masked count normalises every micro-batch
    optimizer.zero_grad();
    auto loss_sum = torch::zeros({1}, torch::kFloat64);
    for (const auto& m : micro) {
      auto loss = m.ids.numel() == 0 ? torch::zeros({}) : model->loss_sum(m.ids, m.labels);
      auto scaled = loss / count.item<double>();
      // As TrainingStep does: the last backward overlaps the reduction.
      if (&m == &micro.back()) reducer.prepare_for_backward(scaled);
      scaled.backward();
      loss_sum += loss.item<double>();
    }
    reducer.finish();
    optimizer.step();
    comm.all_reduce_sum(loss_sum);
    losses.push_back(loss_sum.item<double>() / count.item<double>());
  }
  return losses;
}

MLM_DIST_SCENARIO(data_parallel_equivalence) {
  torch::set_num_threads(1);
  config::DistributedConfig config;
  config.backend = config::DistBackend::gloo;
  config.timeout_s = testing::scenario_timeout_s();
  auto comm = Communicator::create(env, config, torch::kCPU);

  auto reference = fresh_model();
  const auto want = train_reference(reference);
  for (int64_t accum : {1, 2}) {
    SCOPED_TRACE("grad_accum_steps " + std::to_string(accum));
    auto model = fresh_model();
    const auto got = train_data_parallel(model, *comm, comm, accum);
    for (int64_t step = 0; step < kSteps; ++step) {
      EXPECT_NEAR(got[step], want[step], 1e-5) << "loss of step " << step;
    }
    const auto want_params = reference->named_parameters();
    for (const auto& item : model->named_parameters()) {
      const auto diff = (item.value() - want_params[item.key()]).abs().max().item<double>();
      EXPECT_LT(diff, 1e-5) << "weight " << item.key() << " after " << kSteps << " steps";
    }
  }
}

TEST(DataParallel, TwoRanksMatchOneProcessWithTheWholeBatch) {
  const auto results = testing::run_ranks("data_parallel_equivalence", testing::LaunchOptions{});
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << ": " << results[r].summary();
  }
}

}  // namespace
}  // namespace mlm::dist

// Bucketed gradient all-reduce, overlapped with backward (see gradient_reducer.h).
#include "mlm/dist/gradient_reducer.h"

#include <fmt/format.h>

#include <unordered_set>

#include "accumulator_hooks.h"
#include "mlm/util/errors.h"

namespace mlm::dist {
namespace {

// Calls fn(param, slice) for each parameter of `bucket`, `slice` being the part of the
// bucket's flat buffer that holds its gradient, shaped like it: the one layout both
// directions of the copy agree on.
template <class Fn>
void for_each_slice(const Bucket& bucket, std::vector<torch::Tensor>& params, const torch::Tensor& buffer,
                    Fn fn) {
  int64_t offset = 0;
  for (size_t i : bucket.params) {
    auto& p = params[i];
    fn(p, buffer.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
}

}  // namespace

GradientReducer::GradientReducer(std::shared_ptr<Communicator> comm,
                                 std::vector<torch::Tensor> params, int64_t bucket_mb,
                                 bool overlap)
    : comm_(std::move(comm)) {
  if (bucket_mb < 1) {
    throw ConfigError(fmt::format("distributed.bucket_mb ({}) must be >= 1", bucket_mb),
                      "distributed.bucket_mb");
  }
  std::unordered_set<const void*> seen;  // a tied weight listed twice is reduced once
  for (auto& p : params) {
    if (p.defined() && p.requires_grad() && seen.insert(p.unsafeGetTensorImpl()).second) {
      params_.push_back(p);
    }
  }
  if (comm_->world_size() == 1) return;  // nothing to reduce: no buffers, no hooks either
  buckets_ = plan_buckets(params_, bucket_mb * 1024 * 1024);
  for (const auto& b : buckets_) {
    buffers_.push_back(torch::empty({b.numel}, torch::TensorOptions().dtype(b.dtype).device(b.device)));
  }
  schedule_ = LaunchSchedule(buckets_, params_.size());
  if (overlap) {
    hooks_ = std::make_unique<AccumulatorHooks>(params_, [this](size_t i) { on_accumulated(i); });
  }
}

GradientReducer::~GradientReducer() = default;

void GradientReducer::prepare_for_backward(const torch::Tensor& loss) {
  if (!hooks_) return;
  const auto in_graph = hooks_->reached_from(loss);
  std::lock_guard<std::mutex> lock(mutex_);
  schedule_.reset();
  armed_ = true;
  // Their accumulators will not run: the gradient they hold now is final.
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!in_graph[i]) start_buckets(schedule_.mark_ready(i));
  }
}

void GradientReducer::on_accumulated(size_t param) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!armed_) return;  // an earlier micro-batch: it only accumulates
  start_buckets(schedule_.mark_ready(param));
}

void GradientReducer::start_buckets(const std::vector<size_t>& buckets) {
  torch::NoGradGuard no_grad;
  for (size_t b : buckets) {
    for_each_slice(buckets_[b], params_, buffers_[b], [](torch::Tensor& p, torch::Tensor slice) {
      if (p.grad().defined()) {
        slice.copy_(p.grad());
      } else {
        slice.zero_();
      }
    });
    comm_->start_all_reduce_sum(buffers_[b]);
  }
}

size_t GradientReducer::buckets_started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return schedule_.started();
}

void GradientReducer::finish() {
  if (comm_->world_size() == 1) return;
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
  // Without prepare_for_backward (schedule idle) every bucket starts here. Gloo reduces
  // bucket k on its own threads while this thread copies bucket k+1.
  start_buckets(schedule_.start_rest());
  schedule_.reset();
  comm_->wait_all();
  torch::NoGradGuard no_grad;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for_each_slice(buckets_[b], params_, buffers_[b], [](torch::Tensor& p, const torch::Tensor& slice) {
      if (p.grad().defined()) {
        p.mutable_grad().copy_(slice);
      } else {
        p.mutable_grad() = slice.clone();
      }
    });
  }
}

}  // namespace mlm::dist

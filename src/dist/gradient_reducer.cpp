// Bucketed gradient all-reduce (see gradient_reducer.h).
#include "mlm/dist/gradient_reducer.h"

#include <fmt/format.h>

#include <unordered_set>

#include "mlm/util/errors.h"

namespace mlm::dist {

std::vector<Bucket> plan_buckets(const std::vector<torch::Tensor>& params, int64_t bucket_bytes) {
  std::vector<Bucket> buckets;
  int64_t bytes_in_last = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    const bool fits = !buckets.empty() && buckets.back().dtype == p.scalar_type() &&
                      buckets.back().device == p.device() &&
                      bytes_in_last + bytes <= bucket_bytes;
    if (!fits) {
      buckets.push_back(Bucket{{}, 0, p.scalar_type(), p.device()});
      bytes_in_last = 0;
    }
    buckets.back().params.push_back(i);
    buckets.back().numel += p.numel();
    bytes_in_last += bytes;
  }
  return buckets;
}

GradientReducer::GradientReducer(std::shared_ptr<Communicator> comm,
                                 std::vector<torch::Tensor> params, int64_t bucket_mb)
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
  if (comm_->world_size() == 1) return;  // nothing to reduce: no buffers either
  buckets_ = plan_buckets(params_, bucket_mb * 1024 * 1024);
  for (const auto& b : buckets_) {
    buffers_.push_back(torch::empty({b.numel}, torch::TensorOptions().dtype(b.dtype).device(b.device)));
  }
}

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

void GradientReducer::reduce() {
  if (comm_->world_size() == 1) return;
  torch::NoGradGuard no_grad;
  // Fill and start every bucket before waiting for any: Gloo reduces bucket k on its own
  // threads while this thread copies bucket k+1.
  for (size_t b = 0; b < buckets_.size(); ++b) {
    for_each_slice(buckets_[b], params_, buffers_[b], [](torch::Tensor& p, torch::Tensor slice) {
      if (p.grad().defined()) {
        slice.copy_(p.grad());
      } else {
        slice.zero_();
      }
    });
    comm_->start_all_reduce_sum(buffers_[b]);
  }
  comm_->wait_all();
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

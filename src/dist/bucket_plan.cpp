// Bucket plan (see bucket_plan.h).
#include "mlm/dist/bucket_plan.h"

namespace mlm::dist {

std::vector<Bucket> plan_buckets(const std::vector<torch::Tensor>& params, int64_t bucket_bytes) {
  std::vector<Bucket> buckets;
  int64_t bytes_in_last = 0;
  for (size_t i = params.size(); i-- > 0;) {
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

}  // namespace mlm::dist

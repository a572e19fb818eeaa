#pragma once
// Data-parallel gradient sum: every rank's gradients are replaced by their sum over all
// ranks. Gradients are copied into flat buckets of about bucket_mb (bucket_plan.h, one
// all-reduce each), then copied back. They are SUMMED, not averaged: the trainer divides the
// loss by the global masked-token count instead, so N ranks x batch B equal one process x
// batch N*B.
//
// Overlap with backward: prepare_for_backward(loss) before the step's LAST backward arms a
// hook on every parameter's gradient accumulator; as soon as all of a bucket's gradients are
// final, the bucket is copied and its all-reduce started while backward goes on, in plan
// order on every rank (launch_schedule.h). finish() starts the rest, waits and copies back.
// Without prepare_for_backward, finish() does it all after backward; the sums are the same
// bit for bit either way (same buckets, same values, same order of collectives).
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "mlm/dist/bucket_plan.h"
#include "mlm/dist/communicator.h"
#include "mlm/dist/launch_schedule.h"

namespace mlm::dist {

class AccumulatorHooks;  // src/dist/accumulator_hooks.h

class GradientReducer {
 public:
  /// `params`: the trained parameters (those not requiring grad and repeated ones are
  /// dropped). `bucket_mb` >= 1 (distributed.bucket_mb). `overlap`: hook the accumulators so
  /// prepare_for_backward() can start buckets during backward; pass false when a parameter's
  /// accumulator may run more than once per backward (the reentrant activation checkpointing
  /// of model.activation_checkpointing recomputes layers in nested backward passes).
  GradientReducer(std::shared_ptr<Communicator> comm, std::vector<torch::Tensor> params,
                  int64_t bucket_mb, bool overlap = true);
  ~GradientReducer();

  /// Call right before the step's last `loss.backward()` (earlier micro-batches only
  /// accumulate). Parameters outside loss's graph keep their gradient, so they count as ready
  /// at once. A no-op with world size 1 or without overlap.
  void prepare_for_backward(const torch::Tensor& loss);

  /// Sums the gradients across ranks, in place. Call on every rank after the last backward
  /// of a step. A parameter without a gradient on this rank counts as zeros (and gets a
  /// gradient), so ranks that skipped part of the model still agree.
  void finish();

  size_t num_buckets() const { return buckets_.size(); }
  /// How many buckets have started since prepare_for_backward(); 0 outside a backward pass
  /// (tests call it from a hook inside backward to see the overlap happen).
  size_t buckets_started() const;

 private:
  void on_accumulated(size_t param);  // the autograd engine's thread
  void start_buckets(const std::vector<size_t>& buckets);

  std::shared_ptr<Communicator> comm_;
  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<torch::Tensor> buffers_;  // one flat buffer per bucket, allocated once
  LaunchSchedule schedule_;
  std::unique_ptr<AccumulatorHooks> hooks_;  // null: no overlap
  mutable std::mutex mutex_;  // hooks may run on an engine thread (one per device)
  bool armed_ = false;        // between prepare_for_backward() and finish()
};

}  // namespace mlm::dist

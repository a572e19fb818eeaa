#pragma once
// Private to src/dist: the c10d process group behind a Communicator, behind a small virtual
// interface so communicator.cpp does not care whether it is Gloo or NCCL.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "mlm/dist/dist_env.h"

namespace mlm::dist {

class Collectives {
 public:
  virtual ~Collectives() = default;
  virtual std::string name() const = 0;

  // Each starts one collective and returns at once; wait_all() blocks until every started
  // one has finished, in order, and rethrows the first failure (as c10d reported it).
  virtual void start_all_reduce_sum(torch::Tensor& flat) = 0;
  virtual void start_broadcast(torch::Tensor& flat, int root) = 0;
  // out[r] receives rank r's `in` (same shape and dtype on every rank).
  virtual void start_all_gather(std::vector<torch::Tensor>& out, torch::Tensor& in) = 0;
  virtual void wait_all() = 0;
};

/// The job's two process groups, rendezvoused through one store: `device` reduces the
/// training tensors where they live (Gloo on the CPU, NCCL on the rank's GPU); `host` is
/// always Gloo, for numbers the host holds (counts, flags, strings, barriers), so summing
/// them never queues behind the GPU's work nor reads it back.
struct ProcessGroups {
  std::unique_ptr<Collectives> device;
  std::unique_ptr<Collectives> host;
};

/// Connects to the store and builds both groups, `device` for `backend` ("gloo" or "nccl").
/// Throws what c10d throws; communicator.cpp turns it into a DistributedError.
/// `device` is where the training tensors will live (NCCL: the rank's GPU, made current here).
ProcessGroups connect_process_groups(const DistEnv& env, const std::string& backend,
                                     torch::Device device, std::chrono::milliseconds timeout);

/// Whether this build has NCCL (a CUDA LibTorch: MLM_WITH_CUDA).
bool nccl_compiled_in();

}  // namespace mlm::dist

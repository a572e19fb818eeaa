#pragma once
// The collectives the trainer needs, on PyTorch's own c10d process groups: Gloo for CPU
// tensors, NCCL for CUDA tensors (compiled in only with a CUDA LibTorch, MLM_WITH_CUDA).
// Rendezvous goes through c10d::TCPStore at MASTER_ADDR:MASTER_PORT (hosted by rank 0, or
// by the torchrun agent when TORCHELASTIC_USE_AGENT_STORE=True).
//
// Every call is collective: all ranks make the same calls in the same order with tensors of
// the same shapes and dtypes. A peer that dies or stops answering makes the call throw
// mlm::dist::DistributedError within distributed.timeout_s (never a hang).
// With world size 1 nothing is created and every call is a cheap no-op.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlm/config/sections/distributed.h"
#include "mlm/dist/dist_env.h"

namespace mlm::dist {

/// A collective or the rendezvous failed (peer died, timed out, store unreachable).
/// A runtime failure: exit code 1.
class DistributedError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Collectives;  // a c10d process group behind a Communicator (collectives.h)

class Communicator {
 public:
  /// Joins the job described by `env`: connects to (or hosts) the store and builds the
  /// process group for `device` (CPU: Gloo; CUDA: NCCL unless distributed.backend says gloo).
  /// Throws ConfigError for a backend that cannot serve `device` or this build, and
  /// DistributedError when the rendezvous fails or times out.
  static std::shared_ptr<Communicator> create(const DistEnv& env,
                                              const config::DistributedConfig& config,
                                              torch::Device device);

  /// A world-size-1 communicator: every call is a no-op.
  static std::shared_ptr<Communicator> single_process(torch::Device device = torch::kCPU);

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool is_main() const { return rank_ == 0; }
  /// Where the backend wants tensors (CPU for Gloo; the rank's GPU for NCCL).
  torch::Device device() const { return device_; }
  /// "gloo", "nccl" or "none" (world size 1).
  std::string backend_name() const;

  /// Sums each tensor across ranks, in place. Tensors may differ in shape and dtype (they
  /// are flattened per dtype into one buffer, so a list costs one collective per dtype).
  void all_reduce_sum(std::vector<torch::Tensor>& tensors);
  void all_reduce_sum(torch::Tensor& tensor);

  /// Overwrites every rank's tensors with those of `root`, in place.
  void broadcast(std::vector<torch::Tensor>& tensors, int root = 0);

  // The host's own numbers go through a second, Gloo process group on the CPU (also under
  // NCCL), so they never wait for the GPU nor queue behind the gradients' reductions.

  /// Scalars (counts, loss sums, flags) summed over all ranks in one collective. float64
  /// keeps integer counts exact up to 2^53.
  std::vector<double> sum_across_ranks(std::vector<double> values);

  /// Every rank's string, indexed by rank (e.g. each rank's serialized data position).
  std::vector<std::string> all_gather_strings(const std::string& mine);

  /// Returns once every rank has reached it.
  void barrier();

  /// For GradientReducer: starts a sum of one flat buffer; wait_all() finishes them in order.
  /// (Several in flight let the reduction of one bucket overlap the copying of the next.)
  void start_all_reduce_sum(torch::Tensor& flat);
  void wait_all();

 private:
  Communicator(int rank, int world_size, torch::Device device, std::unique_ptr<Collectives> collectives,
               std::unique_ptr<Collectives> host, double timeout_s);
  // Runs `call`, which starts a collective, turning what c10d throws into a DistributedError.
  void start(const char* collective, const std::function<void()>& call);
  void wait(Collectives& group);
  void all_gather_on_host(std::vector<torch::Tensor>& out, torch::Tensor& in);

  int rank_ = 0;
  int world_size_ = 1;
  torch::Device device_;
  std::unique_ptr<Collectives> collectives_;  // the training tensors', on device_
  std::unique_ptr<Collectives> host_;         // Gloo, CPU tensors
  double timeout_s_ = 0;
};

}  // namespace mlm::dist

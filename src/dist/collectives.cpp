// The c10d side: TCPStore rendezvous and ProcessGroupGloo / ProcessGroupNCCL.
#include "collectives.h"

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef MLM_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstdlib>
#include <sstream>

namespace mlm::dist {
namespace {

// Holds one c10d::Backend (ProcessGroupGloo or ProcessGroupNCCL, through the base class's
// virtual collectives) and the store it rendezvoused through.
class GroupCollectives final : public Collectives {
 public:
  GroupCollectives(std::string name, c10::intrusive_ptr<c10d::Store> store,
                   c10::intrusive_ptr<c10d::Backend> group)
      : name_(std::move(name)), store_(std::move(store)), group_(std::move(group)) {}

  ~GroupCollectives() override {
    pending_.clear();
    group_.reset();  // before the store it rendezvoused through
    store_.reset();
  }

  std::string name() const override { return name_; }

  void start_all_reduce_sum(torch::Tensor& flat) override {
    std::vector<torch::Tensor> one{flat};
    c10d::AllreduceOptions options;
    options.reduceOp = c10d::ReduceOp::SUM;
    pending_.push_back(group_->allreduce(one, options));
  }

  void start_broadcast(torch::Tensor& flat, int root) override {
    std::vector<torch::Tensor> one{flat};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    options.rootTensor = 0;
    pending_.push_back(group_->broadcast(one, options));
  }

  void start_all_gather(std::vector<torch::Tensor>& out, torch::Tensor& in) override {
    std::vector<std::vector<torch::Tensor>> outputs{out};
    std::vector<torch::Tensor> inputs{in};
    pending_.push_back(group_->allgather(outputs, inputs));
    gathered_.push_back(std::move(outputs));  // alive until the work is done
  }

  void wait_all() override {
    // Clear the list even when a wait throws: the failed group is not used again.
    auto pending = std::move(pending_);
    pending_.clear();
    auto gathered = std::move(gathered_);
    gathered_.clear();
    for (auto& work : pending) work->wait();
  }

 private:
  std::string name_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> group_;
  std::vector<c10::intrusive_ptr<c10d::Work>> pending_;
  std::vector<std::vector<std::vector<torch::Tensor>>> gathered_;
};

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// Which network interface Gloo listens on. GLOO_SOCKET_IFNAME (comma-separated) wins, as in
// torch.distributed; a loopback MASTER_ADDR means a single-node job, so loopback suffices
// (and works on machines whose host name does not resolve); otherwise the address the host
// name resolves to, as torch.distributed's default does.
std::vector<std::shared_ptr<::gloo::transport::Device>> gloo_devices(const DistEnv& env) {
  std::vector<std::shared_ptr<::gloo::transport::Device>> devices;
  if (const char* names = std::getenv("GLOO_SOCKET_IFNAME"); names != nullptr && *names) {
    std::stringstream list(names);
    for (std::string name; std::getline(list, name, ',');) {
      if (!name.empty()) devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    }
  }
  if (devices.empty()) {
    devices.push_back(is_loopback(env.master_addr)
                          ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                          : c10d::ProcessGroupGloo::createDefaultDevice());
  }
  return devices;
}

c10::intrusive_ptr<c10d::Store> connect_store(const DistEnv& env,
                                              std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  // Rank 0 hosts the store unless the torchrun agent already does (and then serves it).
  options.isServer = env.rank == 0 && !env.use_agent_store;
  options.numWorkers = static_cast<std::size_t>(env.world_size);
  options.waitWorkers = true;
  options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store =
      c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  store->setTimeout(timeout);
  if (env.use_agent_store) {
    // The agent's store outlives restarts; torch.distributed keeps each attempt's keys apart
    // under the same prefix.
    store = c10::make_intrusive<c10d::PrefixStore>(
        fmt::format("/worker/attempt_{}", env.restart_count), store);
  }
  return store;
}

std::unique_ptr<Collectives> gloo_group(const DistEnv& env, c10::intrusive_ptr<c10d::Store> store,
                                        std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices = gloo_devices(env);
  auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
  return std::make_unique<GroupCollectives>("gloo", store, group);
}

}  // namespace

bool nccl_compiled_in() {
#ifdef MLM_WITH_CUDA
  return true;
#else
  return false;
#endif
}

ProcessGroups connect_process_groups(const DistEnv& env, const std::string& backend,
                                     torch::Device device, std::chrono::milliseconds timeout) {
  const auto store = connect_store(env, timeout);
  // Each group's keys under its own prefix of the one store.
  const auto device_store = c10::make_intrusive<c10d::PrefixStore>("mlm_default_pg", store);
  ProcessGroups groups;
  groups.host = gloo_group(env, c10::make_intrusive<c10d::PrefixStore>("mlm_host_pg", store),
                           timeout);
  if (backend == "gloo") {
    groups.device = gloo_group(env, device_store, timeout);
    return groups;
  }
#ifdef MLM_WITH_CUDA
  if (backend == "nccl") {
    // A collective stuck past the timeout aborts the communicator (and the process) from
    // c10d's watchdog instead of hanging: opt in unless the user chose otherwise.
    setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", /*overwrite=*/0);
    setenv("NCCL_ASYNC_ERROR_HANDLING", "1", /*overwrite=*/0);
    if (device.is_cuda()) c10::cuda::set_device(device.index());
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    auto group = c10::make_intrusive<c10d::ProcessGroupNCCL>(device_store, env.rank, env.world_size,
                                                             options);
    groups.device = std::make_unique<GroupCollectives>("nccl", device_store, group);
    return groups;
  }
#endif
  throw std::invalid_argument("unknown or unavailable backend " + backend);
}

}  // namespace mlm::dist

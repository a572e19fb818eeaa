// Communicator: backend choice, error wrapping and the flatten-per-dtype collectives.
#include "mlm/dist/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "collectives.h"
#include "flatten.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::dist {
namespace {

/// Says what a rank waits for while it joins the job: the store's address, the world size and
/// the timeout when the wait starts, then at intervals (a quarter of the timeout, 1 to 30 s)
/// until it ends, so that a rank whose peers never come is not silent until the timeout.
class RendezvousWait {
 public:
  RendezvousWait(const DistEnv& env, const std::string& backend, double timeout_s)
      : start_(std::chrono::steady_clock::now()) {
    const char* host = env.use_agent_store ? "the launcher hosts the store"
                       : env.rank == 0     ? "this rank hosts the store"
                                           : "rank 0 hosts the store";
    const std::string what = fmt::format(
        "rank {} of WORLD_SIZE={} waiting for the {} rendezvous at {}:{} ({}; "
        "distributed.timeout_s={} s)",
        env.rank, env.world_size, backend, env.master_addr, env.master_port, host, timeout_s);
    const auto interval = std::chrono::milliseconds(
        static_cast<int64_t>(std::clamp(timeout_s / 4, 1.0, 30.0) * 1000));
    log::info("dist", "{}", what);
    reporter_ = std::thread([this, what, interval] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!done_cv_.wait_for(lock, interval, [this] { return done_; })) {
        const auto waited = std::chrono::duration_cast<std::chrono::seconds>(
            std::chrono::steady_clock::now() - start_);
        log::warn("dist", "still {} after {} s", what, waited.count());
      }
    });
  }
  ~RendezvousWait() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    reporter_.join();
  }
  RendezvousWait(const RendezvousWait&) = delete;
  RendezvousWait& operator=(const RendezvousWait&) = delete;

 private:
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread reporter_;
};

// c10::Error's what() carries a C++ backtrace; the user needs the first line.
std::string first_line(const std::exception& e) {
  std::string text = e.what();
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    text = c10_error->what_without_backtrace();
  }
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

std::string choose_backend(const config::DistributedConfig& config, torch::Device device) {
  using config::DistBackend;
  switch (config.backend) {
    case DistBackend::gloo:
      return "gloo";
    case DistBackend::nccl:
      if (!nccl_compiled_in()) {
        throw ConfigError(
            "distributed.backend: nccl needs a LibTorch built with CUDA; this build has none "
            "(use gloo, or auto)",
            "distributed.backend");
      }
      if (!device.is_cuda()) {
        throw ConfigError(
            "distributed.backend: nccl reduces CUDA tensors but the training device is the CPU "
            "(use gloo, or auto)",
            "distributed.backend");
      }
      return "nccl";
    case DistBackend::auto_detect:
      return device.is_cuda() && nccl_compiled_in() ? "nccl" : "gloo";
  }
  return "gloo";
}

}  // namespace

Communicator::Communicator(int rank, int world_size, torch::Device device,
                           std::unique_ptr<Collectives> collectives, std::unique_ptr<Collectives> host,
                           double timeout_s)
    : rank_(rank),
      world_size_(world_size),
      device_(device),
      collectives_(std::move(collectives)),
      host_(std::move(host)),
      timeout_s_(timeout_s) {}

Communicator::~Communicator() = default;

std::shared_ptr<Communicator> Communicator::single_process(torch::Device device) {
  return std::shared_ptr<Communicator>(new Communicator(0, 1, device, nullptr, nullptr, 0));
}

std::shared_ptr<Communicator> Communicator::create(const DistEnv& env,
                                                   const config::DistributedConfig& config,
                                                   torch::Device device) {
  if (!(config.timeout_s > 0)) {
    throw ConfigError(fmt::format("distributed.timeout_s ({}) must be > 0 seconds",
                                  config.timeout_s),
                      "distributed.timeout_s");
  }
  if (device.is_cuda() && !device.has_index()) {
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
  }
  const std::string backend = choose_backend(config, device);
  if (env.world_size == 1) return single_process(device);

  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(config.timeout_s * 1000));
  // Gloo reduces the tensors where they are; its buffers for strings and barriers live on
  // the CPU. NCCL needs everything on the rank's GPU.
  const torch::Device comm_device = backend == "nccl" ? device : torch::Device(torch::kCPU);
  if (env.local_world_size_assumed) {
    log::warn("dist", "LOCAL_RANK is set but LOCAL_WORLD_SIZE is not: assuming up to WORLD_SIZE={} "
              "ranks on this node; set LOCAL_WORLD_SIZE (torchrun does) to the processes per node",
              env.world_size);
  }
  ProcessGroups groups;
  try {
    RendezvousWait wait(env, backend, config.timeout_s);
    groups = connect_process_groups(env, backend, comm_device, timeout);
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format(
        "[dist] {}: could not join the {} process group through the store at {}:{} within "
        "distributed.timeout_s={} s: {}",
        env.describe(), backend, env.master_addr, env.master_port, config.timeout_s,
        first_line(e)));
  }
  log::info("dist", "joined {} process group: {}", backend, env.describe());
  return std::shared_ptr<Communicator>(new Communicator(env.rank, env.world_size, comm_device,
                                                        std::move(groups.device), std::move(groups.host),
                                                        config.timeout_s));
}

std::string Communicator::backend_name() const {
  return collectives_ ? collectives_->name() : "none";
}

void Communicator::start(const char* collective, const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    throw DistributedError(
        fmt::format("[dist] rank {}/{}: {} failed: {}", rank_, world_size_, collective, first_line(e)));
  }
}

void Communicator::start_all_reduce_sum(torch::Tensor& flat) {
  if (world_size_ > 1) start("all_reduce", [&] { collectives_->start_all_reduce_sum(flat); });
}

void Communicator::wait_all() {
  if (world_size_ > 1) wait(*collectives_);
}

void Communicator::wait(Collectives& group) {
  try {
    group.wait_all();
  } catch (const std::exception& e) {
    throw DistributedError(fmt::format(
        "[dist] rank {}/{}: a collective failed: {} (another rank died, stopped responding "
        "for more than distributed.timeout_s={} s, or made a different call)",
        rank_, world_size_, first_line(e), timeout_s_));
  }
}

void Communicator::all_reduce_sum(torch::Tensor& tensor) {
  std::vector<torch::Tensor> one{tensor};
  all_reduce_sum(one);
}

void Communicator::all_reduce_sum(std::vector<torch::Tensor>& tensors) {
  if (world_size_ == 1 || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  auto groups = group_by_dtype_and_device(tensors);
  std::vector<torch::Tensor> flats;
  for (const auto& group : groups) {
    flats.push_back(flatten(tensors, group));
    start_all_reduce_sum(flats.back());
  }
  wait_all();
  for (size_t g = 0; g < groups.size(); ++g) unflatten_into(flats[g], tensors, groups[g]);
}

void Communicator::broadcast(std::vector<torch::Tensor>& tensors, int root) {
  TORCH_CHECK(root >= 0 && root < world_size_, "broadcast root ", root, " is not a rank of ",
              world_size_);
  if (world_size_ == 1 || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  auto groups = group_by_dtype_and_device(tensors);
  std::vector<torch::Tensor> flats;
  start("broadcast", [&] {
    for (const auto& group : groups) {
      flats.push_back(flatten(tensors, group));
      collectives_->start_broadcast(flats.back(), root);
    }
  });
  wait_all();
  for (size_t g = 0; g < groups.size(); ++g) unflatten_into(flats[g], tensors, groups[g]);
}

std::vector<double> Communicator::sum_across_ranks(std::vector<double> values) {
  if (world_size_ == 1 || values.empty()) return values;
  auto tensor = torch::from_blob(values.data(), {static_cast<int64_t>(values.size())}, torch::kFloat64);
  start("all_reduce", [&] { host_->start_all_reduce_sum(tensor); });
  wait(*host_);
  return values;  // summed in place, through the tensor's view of them
}

void Communicator::all_gather_on_host(std::vector<torch::Tensor>& out, torch::Tensor& in) {
  out.assign(world_size_, torch::Tensor());
  for (auto& t : out) t = torch::empty_like(in);
  start("all_gather", [&] { host_->start_all_gather(out, in); });
  wait(*host_);
}

std::vector<std::string> Communicator::all_gather_strings(const std::string& mine) {
  if (world_size_ == 1) return {mine};
  // Round 1: every length, so round 2 can pad every string to the longest.
  auto length = torch::tensor({static_cast<int64_t>(mine.size())}, torch::kInt64);
  std::vector<torch::Tensor> lengths;
  all_gather_on_host(lengths, length);
  int64_t longest = 1;  // never a zero-sized buffer
  for (const auto& t : lengths) longest = std::max(longest, t.item<int64_t>());
  auto payload = torch::zeros({longest}, torch::kUInt8);
  std::memcpy(payload.data_ptr<uint8_t>(), mine.data(), mine.size());
  std::vector<torch::Tensor> payloads;
  all_gather_on_host(payloads, payload);
  std::vector<std::string> out;
  for (int r = 0; r < world_size_; ++r) {
    out.emplace_back(reinterpret_cast<const char*>(payloads[r].data_ptr<uint8_t>()),
                     static_cast<size_t>(lengths[r].item<int64_t>()));
  }
  return out;
}

void Communicator::barrier() {
  if (world_size_ == 1) return;
  sum_across_ranks({0.0});  // a one-element sum is a barrier
}

}  // namespace mlm::dist

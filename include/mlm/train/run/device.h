#pragma once
// Where and on how many threads a process computes: train.device and train.threads.
#include <torch/torch.h>

#include "mlm/config/enums.h"

namespace mlm::train {

/// auto = CUDA when LibTorch has it (the GPU local_rank % count), else CPU; cuda without
/// CUDA is a ConfigError naming train.device.
torch::Device resolve_device(config::DeviceKind kind, int local_rank = 0);

/// The dtype the forward passes autocast to, train.precision resolved for `device`
/// (kFloat32: no autocast; weights, gradients and optimizer state stay fp32 either way).
/// auto = bf16 on GPUs that have it (compute capability 8.0+) and on CPUs with AVX512-BF16,
/// where bf16 matrix products run 2-3x faster than fp32; fp16 on older GPUs (with dynamic loss
/// scaling, loss_scaler.h); fp32 on other CPUs, where LibTorch's bf16 products take a scalar
/// path ~15x slower.
torch::Dtype compute_dtype(config::Precision precision, const torch::Device& device);

/// "fp32", "bf16" or "fp16": a compute dtype as train.precision spells it.
const char* precision_name(torch::Dtype compute_dtype);

/// The CPU has AVX512-BF16 instructions (x86-64; false elsewhere).
bool cpu_has_fast_bf16();

/// The most memory PyTorch's caching allocator has held in tensors on a CUDA device since the
/// process started, in MiB (torch.cuda.max_memory_allocated); 0 on the CPU.
double peak_device_memory_mb(const torch::Device& device);

/// Makes glibc keep freed memory in the process for reuse (no mmap for large blocks, no trim).
/// A training step frees and re-allocates the same large tensors (logits, gradients,
/// activations) every step; by default glibc returns each one to the kernel and faults it
/// back in, zero-filled, on the next step: 13-20% of a mini fp32 step on 2 cores. The price
/// is that resident memory stays at its peak. No-op without glibc or with MLM_MALLOC_DEFAULT=1.
void configure_memory();

/// torch::set_num_threads(threads). 0 = this process's share of the machine: $OMP_NUM_THREADS
/// when a launcher set it (torchrun, launch_local.sh), else the cores divided by
/// local_world_size (DistEnv's LOCAL_WORLD_SIZE), so ranks on one node do not oversubscribe it.
void configure_threads(int64_t threads, int local_world_size = 1);

}  // namespace mlm::train

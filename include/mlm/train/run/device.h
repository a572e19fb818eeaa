#pragma once
// Where and on how many threads a process computes: train.device and train.threads.
#include <torch/torch.h>

#include "mlm/config/enums.h"

namespace mlm::train {

/// auto = CUDA when LibTorch has it (the GPU local_rank % count), else CPU; cuda without
/// CUDA is a ConfigError naming train.device.
torch::Device resolve_device(config::DeviceKind kind, int local_rank = 0);

/// Whether to run under bf16 autocast: train.precision resolved for `device`. auto = bf16 on
/// CUDA and on CPUs with AVX512-BF16, where bf16 matrix products run 2-3x faster than fp32;
/// fp32 on other CPUs, where LibTorch's bf16 products take a scalar path ~15x slower.
bool use_bf16(config::Precision precision, const torch::Device& device);

/// The CPU has AVX512-BF16 instructions (x86-64; false elsewhere).
bool cpu_has_fast_bf16();

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

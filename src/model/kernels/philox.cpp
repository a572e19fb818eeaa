#include "mlm/model/kernels/philox.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

namespace mlm::model::kernels {

namespace {

// 32 counters side by side in GCC vector types: each round is a handful of vector multiplies
// and xors on any x86-64 (SSE2 up), wider where the clone below allows; several registers'
// worth, so that independent chains hide the multiplies' latency.
constexpr int kLanes = 32;
using U32xN = uint32_t __attribute__((vector_size(4 * kLanes)));
using U64xN = uint64_t __attribute__((vector_size(8 * kLanes)));

// The four outputs of kLanes Philox blocks side by side: lane l of out[k] is output k of the
// block at counter first_counter + l.
struct PhiloxLanes {
  U32xN out[4];
};

inline __attribute__((always_inline)) PhiloxLanes philox_lanes(uint64_t first_counter, uint64_t seed) {
  U64xN lane;
  for (int l = 0; l < kLanes; ++l) lane[l] = static_cast<uint64_t>(l);
  const U64xN counter = first_counter + lane;
  U32xN c0 = __builtin_convertvector(counter, U32xN);
  U32xN c1 = __builtin_convertvector(counter >> 32, U32xN);
  U32xN c2 = {}, c3 = {};
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const U64xN p0 = __builtin_convertvector(c0, U64xN) * 0xD2511F53u;
    const U64xN p1 = __builtin_convertvector(c2, U64xN) * 0xCD9E8D57u;
    const U32xN n0 = __builtin_convertvector(p1 >> 32, U32xN) ^ c1 ^ k0;
    const U32xN n2 = __builtin_convertvector(p0 >> 32, U32xN) ^ c3 ^ k1;
    c1 = __builtin_convertvector(p1, U32xN);
    c3 = __builtin_convertvector(p0, U32xN);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

}  // namespace

// Built for AVX-512, AVX2 and the baseline, picked at load time.
__attribute__((target_clones("avx512f", "avx2", "default")))
void fill_keep_mask(uint8_t* keep, int64_t count, uint64_t first, uint64_t seed, uint32_t threshold) {
  int64_t i = 0;
  // Head: up to the next multiple of 4, so blocks start at lane 0.
  while (i < count && (first + static_cast<uint64_t>(i)) % 4 != 0) {
    const uint64_t e = first + static_cast<uint64_t>(i);
    keep[i++] = philox4x32_10(e / 4, seed)[e % 4] >= threshold;
  }
  for (; i + 4 * kLanes <= count; i += 4 * kLanes) {
    const auto block = philox_lanes((first + static_cast<uint64_t>(i)) / 4, seed);
    const U32xN c0 = block.out[0], c1 = block.out[1], c2 = block.out[2], c3 = block.out[3];
    // Lane l's four keep bytes as one little-endian word: bytes 4l .. 4l+3 of the block.
    const U32xN one = U32xN{} + 1u;
    const U32xN words = ((c0 >= threshold) & one) | (((c1 >= threshold) & one) << 8) |
                        (((c2 >= threshold) & one) << 16) | (((c3 >= threshold) & one) << 24);
    std::memcpy(keep + i, &words, sizeof(words));
  }
  for (; i < count; ++i) {
    const uint64_t e = first + static_cast<uint64_t>(i);
    keep[i] = philox4x32_10(e / 4, seed)[e % 4] >= threshold;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void fill_philox_words(uint32_t* out, int64_t count, uint64_t first, uint64_t seed) {
  int64_t i = 0;
  while (i < count && (first + static_cast<uint64_t>(i)) % 4 != 0) {
    const uint64_t e = first + static_cast<uint64_t>(i);
    out[i++] = philox4x32_10(e / 4, seed)[e % 4];
  }
  for (; i + 4 * kLanes <= count; i += 4 * kLanes) {
    const auto block = philox_lanes((first + static_cast<uint64_t>(i)) / 4, seed);
    // Element 4l + k of the run is output k of lane l.
    for (int l = 0; l < kLanes; ++l)
      for (int k = 0; k < 4; ++k) out[i + 4 * l + k] = block.out[k][l];
  }
  for (; i < count; ++i) {
    const uint64_t e = first + static_cast<uint64_t>(i);
    out[i] = philox4x32_10(e / 4, seed)[e % 4];
  }
}

uint32_t drop_threshold(double p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "dropout probability must be in [0, 1), got ", p);
  return static_cast<uint32_t>(std::min<long long>(std::llround(p * 4294967296.0), 0xFFFFFFFFll));
}

uint64_t next_mask_seed() {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

}  // namespace mlm::model::kernels

#pragma once
// Dropout masks from a counter-based generator: Philox4x32-10 (Salmon et al., SC'11), the
// generator of at::Philox4_32 and of CUDA's dropout. Element e of a mask drawn under `seed`
// takes 32-bit output e % 4 of the block at counter e / 4, so any slice of a mask can be drawn
// on any thread alone: the mask of a seed is the same whatever the thread count.
#include <torch/torch.h>

#include <array>
#include <cstdint>

namespace mlm::model::kernels {

/// The four 32-bit outputs of Philox4x32-10 at 64-bit `counter` under the 64-bit `key`:
/// equal to at::Philox4_32(key, /*subsequence=*/0, /*offset=*/counter)() four times.
inline std::array<uint32_t, 4> philox4x32_10(uint64_t counter, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

/// keep[i] = 1 when element first + i of the mask under `seed` is kept, that is when its 32-bit
/// draw is at least `threshold` (= p * 2^32: dropped with probability p), else 0.
void fill_keep_mask(uint8_t* keep, int64_t count, uint64_t first, uint64_t seed, uint32_t threshold);

/// out[i] = the 32-bit draw of element first + i of the stream under `seed` (as fill_keep_mask
/// reads them), drawn kLanes blocks at a time.
void fill_philox_words(uint32_t* out, int64_t count, uint64_t first, uint64_t seed);

/// p as the threshold of fill_keep_mask: draws below it are dropped.
uint32_t drop_threshold(double p);

/// A fresh mask seed from the default CPU generator (one draw under its lock): what a
/// checkpoint's RNG state restores, so a resumed run draws the masks it would have drawn.
uint64_t next_mask_seed();

}  // namespace mlm::model::kernels

#pragma once
// A seeded bijection of [0, n) evaluated one index at a time, in O(1) and no memory: a
// 4-round Feistel network on the smallest even number of bits covering n, cycle-walked back
// into range (expected < 4 steps, since n > 2^bits / 4). For shuffling inside a block of the
// epoch order without materialising the block's permutation.
#include <cstdint>

#include "mlm/data/seeded_random.h"

namespace mlm::data {

class IndexPermutation {
 public:
  IndexPermutation(int64_t n, uint64_t seed) : n_(n), seed_(seed) {
    int bits = 2;
    while (bits < 62 && (int64_t{1} << bits) < n) bits += 2;
    half_ = bits / 2;
    mask_ = (uint64_t{1} << half_) - 1;
  }

  /// The image of i, for 0 <= i < n.
  int64_t operator()(int64_t i) const {
    if (n_ <= 1) return 0;
    uint64_t x = static_cast<uint64_t>(i);
    do x = encrypt(x); while (x >= static_cast<uint64_t>(n_));
    return static_cast<int64_t>(x);
  }

 private:
  uint64_t encrypt(uint64_t x) const {
    uint64_t left = x >> half_, right = x & mask_;
    for (uint64_t round = 0; round < 4; ++round) {
      const uint64_t f = splitmix64(seed_ ^ (round << 56) ^ right) & mask_;
      const uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    return (left << half_) | right;
  }

  int64_t n_;
  uint64_t seed_;
  int half_ = 1;
  uint64_t mask_ = 1;
};

}  // namespace mlm::data

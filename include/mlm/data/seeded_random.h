#pragma once
// Small, portable randomness for the data order: the same seed gives the same order with
// any standard library (std::shuffle and the std distributions do not promise that).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "mlm/util/splitmix64.h"

namespace mlm::data {

using mlm::splitmix64;

/// One 64-bit seed from several values (seed, epoch, chunk, ...).
inline uint64_t mix_seed(std::initializer_list<uint64_t> values) {
  uint64_t h = 0x243F6A8885A308D3ull;
  for (uint64_t v : values) h = splitmix64(h ^ splitmix64(v));
  return h;
}

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64(state_++); }
  /// Uniform in [0, n), n > 0 (rejection sampling: no modulo bias).
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = next(); while (x >= limit);
    return x % n;
  }
  bool coin() { return (next() >> 63) != 0; }

 private:
  uint64_t state_;
};

/// 0..n-1 in the Fisher-Yates order of `seed`.
inline std::vector<int64_t> seeded_permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  SeededRandom rng(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(static_cast<uint64_t>(i) + 1)]);
  return order;
}

}  // namespace mlm::data

#pragma once
// The masking random generator: xoshiro256** seeded through splitmix64, one fresh generator
// per sequence keyed by (seed, sample_id). Every draw is computed here from integers, never
// through std::*_distribution, whose outputs differ between standard libraries: a run resumed
// on another machine must mask exactly as the uninterrupted one would.
#include <cstdint>

#include "mlm/data/seeded_random.h"

namespace mlm::masking {

/// splitmix64's finalizer (the data order's, shared): a bijection of 64-bit integers with
/// full avalanche.
using data::splitmix64;

/// xoshiro256** (Blackman & Vigna): small state, fast, passes BigCrush.
class MaskingRng {
 public:
  /// Fills the state from the splitmix64 stream of `key`, as the authors recommend (never
  /// all-zero).
  explicit MaskingRng(uint64_t key) {
    for (auto& word : state_) {
      word = splitmix64(key);  // splitmix64: finalize(key + k * golden), k = 1, 2, ...
      key += 0x9e3779b97f4a7c15ULL;
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// Uniform integer in [0, n), n >= 1, without modulo bias (Lemire's multiply-shift with
  /// rejection).
  uint64_t below(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  bool bernoulli(double p) { return uniform() < p; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

/// The generator of one sequence. Injective in sample_id for a fixed seed (splitmix64 and + are
/// bijections), so another visit of the same text (another sample_id) gets a fresh stream
/// while the same (seed, sample_id) always gets the same one.
inline MaskingRng sequence_rng(uint64_t seed, uint64_t sample_id) {
  return MaskingRng(splitmix64(splitmix64(seed) + sample_id));
}

}  // namespace mlm::masking

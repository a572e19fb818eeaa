#pragma once
// SplitMix64 (Steele, Lea and Flood 2014): the project's one 64-bit mixer. Its outputs feed
// the data order, the masking streams and the phases' seeds, so it must never change.
#include <cstdint>

namespace mlm {

/// One step of the SplitMix64 stream from state `x`: finalize(x + golden ratio). A bijection
/// of 64-bit integers.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace mlm

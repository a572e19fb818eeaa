#pragma once
// FNV-1a, 64 bits: the one stable hash of bytes (the same on every run and machine) behind the
// project's fingerprints (corpus, tokenizer, prepared store, checkpointed state) and the
// held-out split. Not for security.
#include <cstdint>
#include <string>
#include <string_view>

namespace mlm {

class Fnv1a {
 public:
  Fnv1a& mix(std::string_view bytes) {
    for (const unsigned char c : bytes) {
      hash_ ^= c;
      hash_ *= 1099511628211ull;
    }
    return *this;
  }
  uint64_t value() const { return hash_; }
  /// 16 lower-case hex digits.
  std::string hex() const;

 private:
  uint64_t hash_ = 1469598103934665603ull;
};

/// Fnv1a().mix(bytes).value() and .hex(), for one piece.
inline uint64_t fnv1a(std::string_view bytes) { return Fnv1a().mix(bytes).value(); }
inline std::string fnv1a_hex(std::string_view bytes) { return Fnv1a().mix(bytes).hex(); }

}  // namespace mlm

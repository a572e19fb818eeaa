#include "mlm/util/fnv1a.h"

#include <cstdio>

namespace mlm {

std::string Fnv1a::hex() const {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash_));
  return out;
}

}  // namespace mlm

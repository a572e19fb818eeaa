#pragma once
// Scalars (counts, loss sums, flags) summed over all ranks in one collective. float64 keeps
// integer counts exact up to 2^53. A no-op with world size 1.
#include <vector>

#include "mlm/dist/communicator.h"

namespace mlm::dist {

std::vector<double> sum_across_ranks(Communicator& comm, std::vector<double> values);

}  // namespace mlm::dist

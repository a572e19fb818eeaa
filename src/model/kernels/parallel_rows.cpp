#include "mlm/model/kernels/parallel_rows.h"

#include <ATen/Parallel.h>

namespace mlm::model::kernels {

// ATen/Parallel.h defines INTRA_OP_PARALLEL only where its backend is compiled in (for OpenMP:
// this file built with -fopenmp); without it at::parallel_for runs the range in one call.
bool kernels_split_rows() {
#ifdef INTRA_OP_PARALLEL
  return true;
#else
  return false;
#endif
}

}  // namespace mlm::model::kernels

#include "cli/common/libtorch_runtime.h"

#include <torch/version.h>

#include "mlm/version.h"

namespace mlm::cli {

std::string libtorch_runtime() { return std::string("LibTorch ") + TORCH_VERSION + ", CUDA " + MLM_CUDA_VERSION; }

}  // namespace mlm::cli

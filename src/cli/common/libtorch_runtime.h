#pragma once
// The LibTorch part of the command-line common code (library mlm_cli_torch, linked only by
// the tools that run on LibTorch: train, eval, export, fill, bench).
#include <string>

namespace mlm::cli {

/// "LibTorch 2.14.1, CUDA 13.0.88" (CUDA "none" for a CPU LibTorch): the end of these tools'
/// --version line (run_main's `runtime`).
std::string libtorch_runtime();

}  // namespace mlm::cli

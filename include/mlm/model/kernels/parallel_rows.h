#pragma once
// Whether the fused kernels' row loops (at::parallel_for) split over LibTorch's threads.

namespace mlm::model::kernels {

/// True when the kernels were compiled with LibTorch's parallel backend (its OpenMP for the
/// wheel; CMakeLists.txt), so that their rows run on every thread torch::set_num_threads
/// gives; false when they run on the calling thread whatever the thread count.
bool kernels_split_rows();

}  // namespace mlm::model::kernels

#include "mlm/model/modernbert/rotary.h"

#include "mlm/model/kernels/rotary_embedding.h"

namespace mlm::model {

RotaryTable RotaryTable::build(int64_t seq, int64_t head_dim, double theta, const torch::Device& device) {
  TORCH_CHECK(head_dim % 2 == 0, "rotary embeddings need an even head width, got ", head_dim);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  // The reference's order of operations, for bit-equal tables: 1 / theta^(arange(0, D, 2) / D).
  const auto inv_freq = 1.0 / torch::pow(theta, torch::arange(0, head_dim, 2, f32) / static_cast<double>(head_dim));
  const auto freqs = torch::arange(seq, f32).unsqueeze(1) * inv_freq;  // [S, D/2]
  const auto angles = torch::cat({freqs, freqs}, -1);                   // [S, D]
  return {angles.cos(), angles.sin()};
}

RotaryTable RotaryTable::at(const torch::Tensor& positions) const {
  return {cos.index_select(0, positions.reshape(-1)).view({positions.size(0), positions.size(1), -1}),
          sin.index_select(0, positions.reshape(-1)).view({positions.size(0), positions.size(1), -1})};
}

torch::Tensor apply_rotary(const torch::Tensor& x, const RotaryTable& table) {
  return kernels::rotate_by_table(x, table.cos, table.sin);
}

}  // namespace mlm::model

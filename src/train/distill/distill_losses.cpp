#include "mlm/train/distill/distill_losses.h"

#include <cmath>

namespace mlm::train::distill {
namespace {

// KL(p || q) of each row (over the last dimension), from log-probabilities.
torch::Tensor kl_rows(const torch::Tensor& teacher_log_p, const torch::Tensor& student_log_p) {
  return (teacher_log_p.exp() * (teacher_log_p - student_log_p)).sum(-1);
}

// A padding key's score: finite, so that 0 * (t - s) stays 0, and far below any real score.
constexpr double kMaskedScore = -1e9;

// [B,S,H] -> [B,heads,S,H/heads]
torch::Tensor split_heads(const torch::Tensor& x, int64_t heads) {
  const int64_t b = x.size(0), s = x.size(1), h = x.size(2);
  return x.reshape({b, s, heads, h / heads}).permute({0, 2, 1, 3});
}

}  // namespace

torch::Tensor kl_loss_sum(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits,
                          double temperature) {
  const auto s = torch::log_softmax(student_logits.to(torch::kFloat32) / temperature, -1);
  const auto t = torch::log_softmax(teacher_logits.to(torch::kFloat32) / temperature, -1);
  return kl_rows(t, s).sum() * (temperature * temperature);
}

torch::Tensor cosine_loss_sum(const torch::Tensor& student_hidden, const torch::Tensor& teacher_hidden,
                              const torch::Tensor& real) {
  const auto cos = torch::cosine_similarity(student_hidden.to(torch::kFloat32), teacher_hidden.to(torch::kFloat32),
                                            /*dim=*/-1, /*eps=*/1e-8);
  return ((1.0 - cos) * real.to(torch::kFloat32)).sum();
}

torch::Tensor relation_loss_sum(const torch::Tensor& student_qkv, const torch::Tensor& teacher_qkv,
                                const torch::Tensor& real, int64_t heads) {
  // Padding keys leave the softmax; padding queries leave the sum.
  const auto key_bias = torch::zeros(real.sizes(), torch::TensorOptions().dtype(torch::kFloat32).device(real.device()))
                            .masked_fill(real.logical_not(), kMaskedScore)
                            .view({real.size(0), 1, 1, real.size(1)});
  const auto query_weight = real.to(torch::kFloat32).view({real.size(0), 1, real.size(1)});
  auto relations = [&](const torch::Tensor& qkv, int64_t part) {
    const auto x = split_heads(qkv.to(torch::kFloat32).chunk(3, -1)[part], heads);
    const double scale = 1.0 / std::sqrt(static_cast<double>(x.size(-1)));
    return torch::log_softmax(torch::matmul(x, x.transpose(-1, -2)) * scale + key_bias, -1);
  };
  auto total = torch::zeros({}, student_qkv.options().dtype(torch::kFloat32));
  for (int64_t part = 0; part < 3; ++part) {  // q-q, k-k, v-v
    const auto t = relations(teacher_qkv, part);
    const auto s = relations(student_qkv, part);
    total = total + (kl_rows(t, s) * query_weight).sum();
  }
  return total;
}

}  // namespace mlm::train::distill

#include "mlm/model/kernels/masked_lm_loss.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <cmath>
#include <vector>

#include "row_math.h"

namespace mlm::model::kernels {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

struct LossAndCorrect {
  torch::Tensor log_sum_exp, loss_sum, correct;
};

/// Per row: log-sum-exp over the first `vocab` columns, the loss, and whether the first
/// maximum is the label.
LossAndCorrect loss_rows(const torch::Tensor& logits, int64_t vocab, const torch::Tensor& labels) {
  RECORD_FUNCTION("mlm::masked_lm_loss", std::vector<c10::IValue>());
  const int64_t rows = logits.size(0), stride = logits.size(1);
  auto log_sum_exp = torch::empty({rows}, logits.options().dtype(torch::kFloat32));
  auto row_loss = torch::empty({rows}, log_sum_exp.options());
  auto row_correct = torch::empty({rows}, logits.options().dtype(torch::kLong));
  const int64_t* label = labels.data_ptr<int64_t>();
  float* lse = log_sum_exp.data_ptr<float>();
  float* loss = row_loss.data_ptr<float>();
  int64_t* correct = row_correct.data_ptr<int64_t>();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, logits.scalar_type(), "masked_lm_loss", [&] {
    const scalar_t* in = logits.data_ptr<scalar_t>();
    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> x(static_cast<size_t>(vocab));
      for (int64_t r = begin; r < end; ++r) {
        const scalar_t* row = in + r * stride;
        load_row(row, x.data(), vocab);
        const float top = row_max(x.data(), vocab);
        int64_t first_top = 0;
        while (first_top < vocab && x[first_top] != top) ++first_top;  // none: a NaN row
        const float target = x[label[r]];
        lse[r] = top + std::log(row_exp_sum(x.data(), vocab, top));
        loss[r] = lse[r] - target;
        correct[r] = first_top == label[r];
      }
    });
  });
  return {log_sum_exp, row_loss.sum(), row_correct.sum()};
}

struct MaskedLmLossFunction : torch::autograd::Function<MaskedLmLossFunction> {
  static tensor_list forward(AutogradContext* ctx, const torch::Tensor& logits, int64_t vocab,
                             const torch::Tensor& labels) {
    const auto input = logits.contiguous();
    auto result = loss_rows(input, vocab, labels);
    ctx->save_for_backward({input, labels, result.log_sum_exp});
    ctx->saved_data["vocab"] = vocab;
    ctx->mark_non_differentiable({result.correct});
    return {result.loss_sum, result.correct};
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    RECORD_FUNCTION("mlm::masked_lm_loss_backward", std::vector<c10::IValue>());
    const auto saved = ctx->get_saved_variables();
    const auto &logits = saved[0], &labels = saved[1], &log_sum_exp = saved[2];
    const int64_t vocab = ctx->saved_data["vocab"].toInt();
    const int64_t rows = logits.size(0), stride = logits.size(1);
    const float g = grads[0].defined() ? grads[0].item<float>() : 0.0f;
    auto grad_logits = torch::empty_like(logits);
    const int64_t* label = labels.data_ptr<int64_t>();
    const float* lse = log_sum_exp.data_ptr<float>();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, logits.scalar_type(), "masked_lm_loss_backward", [&] {
      const scalar_t* in = logits.data_ptr<scalar_t>();
      scalar_t* out = grad_logits.data_ptr<scalar_t>();
      at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> x(static_cast<size_t>(vocab));
        for (int64_t r = begin; r < end; ++r) {
          const scalar_t* row = in + r * stride;
          scalar_t* grad_row = out + r * stride;
          load_row(row, x.data(), vocab);
          row_scaled_exp(x.data(), vocab, lse[r], g);  // g * softmax
          x[label[r]] -= g;
          store_row(x.data(), grad_row, vocab);
          for (int64_t j = vocab; j < stride; ++j) grad_row[j] = static_cast<scalar_t>(0.0f);
        }
      });
    });
    return {grad_logits, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

MaskedLmLoss masked_lm_loss(const torch::Tensor& logits, int64_t vocab, const torch::Tensor& labels) {
  TORCH_CHECK(logits.dim() == 2 && labels.dim() == 1 && labels.size(0) == logits.size(0) && vocab <= logits.size(1),
              "masked_lm_loss: logits [M, >= vocab] and labels [M], got ", logits.sizes(), " and ", labels.sizes());
  if (!logits.device().is_cpu() || logits.size(0) == 0) {
    namespace F = torch::nn::functional;
    const auto real = logits.narrow(1, 0, vocab).to(torch::kFloat32);
    return {F::cross_entropy(real, labels, F::CrossEntropyFuncOptions().reduction(torch::kSum)),
            real.argmax(1).eq(labels).sum()};
  }
  const auto within = labels.ge(0).logical_and(labels.lt(vocab)).all().item<bool>();
  TORCH_CHECK(within, "masked_lm_loss: a label outside [0, ", vocab, ")");
  const auto out = MaskedLmLossFunction::apply(logits, vocab, labels.to(torch::kLong).contiguous());
  return {out[0], out[1]};
}

}  // namespace mlm::model::kernels

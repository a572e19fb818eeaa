#include "mlm/model/kernels/rotary_embedding.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <vector>

#include "row_math.h"

namespace mlm::model::kernels {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// Runs `row(in, cos, sin, out, half)` over every head of every token of x [B,A,S,D] (strided,
/// unit last stride) into a tensor of x's shape and `dtype`, laid out token by token ([B,S,A,D]
/// in memory, as the QKV product is): the loop walks both in memory order, a token's heads
/// together, with the table's row (s, or b·S + s for a per-sequence [B,S,D] table) shared.
template <typename RowFn>
torch::Tensor rotate_rows(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                          torch::ScalarType dtype, RowFn row) {
  const int64_t batch = x.size(0), heads = x.size(1), seq = x.size(2), dim = x.size(3);
  const bool per_sequence = cos.dim() == 3;
  const int64_t stride_b = x.stride(0), stride_a = x.stride(1), stride_s = x.stride(2);
  auto out = torch::empty({batch, seq, heads, dim}, x.options().dtype(dtype));
  const float* c = cos.data_ptr<float>();
  const float* s = sin.data_ptr<float>();
  const int64_t width = heads * dim;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "rotate_by_table", [&] {
    using in_t = scalar_t;
    const in_t* src = x.data_ptr<in_t>();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, dtype, "rotate_by_table", [&] {
      scalar_t* dst = out.data_ptr<scalar_t>();
      at::parallel_for(0, batch * seq, rows_per_task(width, 16384), [&](int64_t begin, int64_t end) {
        std::vector<float> in_row(static_cast<size_t>(width)), out_row(static_cast<size_t>(width));
        for (int64_t t = begin; t < end; ++t) {
          const int64_t b = t / seq, p = t % seq;
          const int64_t table_row = (per_sequence ? t : p) * dim;
          const in_t* token = src + b * stride_b + p * stride_s;
          if (stride_a == dim) {
            load_row(token, in_row.data(), width);
          } else {
            for (int64_t a = 0; a < heads; ++a) load_row(token + a * stride_a, in_row.data() + a * dim, dim);
          }
          for (int64_t a = 0; a < heads; ++a) {
            row(in_row.data() + a * dim, c + table_row, s + table_row, out_row.data() + a * dim, dim / 2);
          }
          store_row(out_row.data(), dst + t * width, width);
        }
      });
    });
  });
  return out.permute({0, 2, 1, 3});
}

struct RotateByTable : torch::autograd::Function<RotateByTable> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin) {
    RECORD_FUNCTION("mlm::rotate_by_table", std::vector<c10::IValue>());
    ctx->save_for_backward({cos, sin});
    ctx->saved_data["dtype"] = static_cast<int64_t>(x.scalar_type());
    return rotate_rows(x, cos, sin, x.scalar_type(), row_rotary);
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    RECORD_FUNCTION("mlm::rotate_by_table_backward", std::vector<c10::IValue>());
    const auto saved = ctx->get_saved_variables();
    const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data["dtype"].toInt());
    auto grad = grads[0];
    if (grad.stride(-1) != 1) grad = grad.contiguous();  // any other layout is read in place
    return {rotate_rows(grad, saved[0], saved[1], dtype, row_rotary_backward), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor rotate_by_table(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  TORCH_CHECK(x.dim() == 4 && x.size(-1) % 2 == 0, "rotate_by_table: x [B,A,S,D] with D even, got ", x.sizes());
  const int64_t seq = x.size(2), dim = x.size(3);
  const bool shared = cos.dim() == 2 && cos.size(0) == seq && cos.size(1) == dim;
  const bool per_sequence = cos.dim() == 3 && cos.size(0) == x.size(0) && cos.size(1) == seq && cos.size(2) == dim;
  TORCH_CHECK((shared || per_sequence) && sin.sizes() == cos.sizes(), "rotate_by_table: a table of ", cos.sizes(),
              " for x of ", x.sizes());
  if (!x.device().is_cpu()) {
    const auto c = cos.dim() == 3 ? cos.unsqueeze(1) : cos;
    const auto s = sin.dim() == 3 ? sin.unsqueeze(1) : sin;
    const auto x32 = x.to(torch::kFloat32);
    const int64_t half = dim / 2;
    const auto rotated = torch::cat({-x32.narrow(-1, half, half), x32.narrow(-1, 0, half)}, -1);
    return (x32 * c + rotated * s).to(x.scalar_type());
  }
  const auto input = x.stride(-1) == 1 ? x : x.contiguous();
  return RotateByTable::apply(input, cos.to(torch::kFloat32).contiguous(), sin.to(torch::kFloat32).contiguous());
}

}  // namespace mlm::model::kernels

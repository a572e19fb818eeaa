#include "mlm/model/kernels/relative_attention.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "mlm/model/kernels/dropout.h"
#include "mlm/model/kernels/philox.h"
#include "row_math.h"

namespace mlm::model::kernels {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// The bias row of score row (b, i): bias [Bb,1,Sb,S] fp32 contiguous (empty: none), read
/// through zero strides where it broadcasts.
struct RelativeBiasRows {
  const float* data = nullptr;
  int64_t batch_stride = 0, row_stride = 0;

  RelativeBiasRows(const torch::Tensor& bias, int64_t queries) {
    if (bias.numel() == 0) return;
    TORCH_CHECK(bias.dim() == 4 && bias.size(1) == 1 && (bias.size(2) == 1 || bias.size(2) == queries),
                "attention bias must be [B or 1, 1, S or 1, S], got ", bias.sizes());
    data = bias.data_ptr<float>();
    const int64_t keys = bias.size(3);
    row_stride = bias.size(2) == 1 ? 0 : keys;
    batch_stride = bias.size(0) == 1 ? 0 : bias.size(2) * keys;
  }
  const float* at(int64_t b, int64_t i) const { return data ? data + b * batch_stride + i * row_stride : nullptr; }
};

/// The shapes every pass reads: B*A heads of S queries and S keys, W relative rows.
struct RelativeShape {
  int64_t batch, heads, seq, width;
  bool c2p, p2c;
};

/// Where head (b, a)'s [S,W] block of a relative term starts: the term is [B,A,S,W] with rows of
/// W contiguous and any dense layout of the rest (the layer passes [A,B,S,W] memory, one product
/// per head over the batch, viewed as [B,A,S,W]).
struct TermLayout {
  int64_t batch_stride = 0, head_stride = 0;
  explicit TermLayout(const torch::Tensor& t) {
    if (t.numel() == 0) return;
    TORCH_CHECK(t.stride(3) == 1 && t.stride(2) == t.size(3), "relative term rows must be contiguous, got strides ",
                t.strides());
    batch_stride = t.stride(0);
    head_stride = t.stride(1);
  }
  int64_t at(int64_t head, int64_t heads) const { return (head / heads) * batch_stride + (head % heads) * head_stride; }
};

/// rows x W of a term into floats (a head's block is contiguous).
template <typename scalar_t>
const float* head_block(const scalar_t* block, int64_t n, std::vector<float>& buffer) {
  if constexpr (std::is_same_v<scalar_t, float>) {
    return block;
  } else {
    buffer.resize(static_cast<size_t>(n));
    load_row(block, buffer.data(), n);
    return buffer.data();
  }
}

/// P = softmax((content + c2p gathered + p2c gathered) * scale + bias), Pd = P * keep / (1 - p),
/// one head per task: its c2p and p2c blocks read in fp32 once.
void relative_softmax_rows(const torch::Tensor& content, const torch::Tensor& c2p, const torch::Tensor& p2c,
                           const int32_t* index, const RelativeBiasRows& bias, const RelativeShape& shape,
                           float scale, double p, uint64_t seed, torch::Tensor& probs, torch::Tensor& dropped,
                           torch::Tensor& keep) {
  RECORD_FUNCTION("mlm::relative_softmax_dropout", std::vector<c10::IValue>());
  const int64_t S = shape.seq, W = shape.width, heads = content.numel() / (S * S);
  const uint32_t threshold = drop_threshold(p);
  const float inverse_keep = static_cast<float>(1.0 / (1.0 - p));
  uint8_t* kept = p > 0 ? keep.data_ptr<uint8_t>() : nullptr;
  const TermLayout c2p_layout(c2p), p2c_layout(p2c);
  AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, content.scalar_type(), "relative_softmax_dropout", [&] {
    const scalar_t* in = content.data_ptr<scalar_t>();
    const scalar_t* query_rel = shape.c2p ? c2p.data_ptr<scalar_t>() : nullptr;
    const scalar_t* key_rel = shape.p2c ? p2c.data_ptr<scalar_t>() : nullptr;
    scalar_t* out = probs.data_ptr<scalar_t>();
    scalar_t* out_dropped = kept ? dropped.data_ptr<scalar_t>() : nullptr;
    at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> e(static_cast<size_t>(S)), query_buffer, key_buffer;
      for (int64_t head = begin; head < end; ++head) {
        const float* qr = query_rel ? head_block(query_rel + c2p_layout.at(head, shape.heads), S * W, query_buffer)
                                    : nullptr;
        const float* kr = key_rel ? head_block(key_rel + p2c_layout.at(head, shape.heads), S * W, key_buffer)
                                  : nullptr;
        for (int64_t i = 0; i < S; ++i) {
          const int64_t o = (head * S + i) * S;
          const int32_t* pair = index + i * S;
          load_row(in + o, e.data(), S);
          if (qr) {  // query i against the relative row of each key
            const float* r = qr + i * W;
            for (int64_t j = 0; j < S; ++j) e[j] += r[pair[j]];
          }
          if (kr) {  // key j against the relative row of query i
            for (int64_t j = 0; j < S; ++j) e[j] += kr[j * W + pair[j]];
          }
          row_scale_add(e.data(), scale, bias.at(head / shape.heads, i), S);
          const float norm = 1.0f / row_exp_sum(e.data(), S, row_max(e.data(), S));
          row_scale_add(e.data(), norm, nullptr, S);
          store_row(e.data(), out + o, S);
          if (!kept) continue;
          fill_keep_mask(kept + o, S, static_cast<uint64_t>(o), seed, threshold);
          row_keep_scale(e.data(), kept + o, inverse_keep, S);
          store_row(e.data(), out_dropped + o, S);
        }
      }
    });
  });
}

/// d s = scale * P * (dP - sum(P * dP)) with dP = dPd * keep / (1 - p), row by row; d content
/// is d s, d c2p[i, index[i,j]] and d p2c[j, index[i,j]] add it up (laid out as c2p and p2c
/// were). One head per task, so that the p2c sums (across the head's rows) need no lock.
tensor_list relative_softmax_backward(const torch::Tensor& probs, const torch::Tensor& keep,
                                      const torch::Tensor& grad_dropped, const int32_t* index,
                                      const RelativeShape& shape, const torch::Tensor& c2p_like,
                                      const torch::Tensor& p2c_like, float scale, double p) {
  RECORD_FUNCTION("mlm::relative_softmax_dropout_backward", std::vector<c10::IValue>());
  const int64_t S = shape.seq, W = shape.width, heads = probs.numel() / (S * S);
  auto grad_content = torch::empty_like(probs);
  // Laid out as the terms were (c2p_like, p2c_like: uninitialised, written whole below).
  auto grad_c2p = shape.c2p ? c2p_like : torch::Tensor();
  auto grad_p2c = shape.p2c ? p2c_like : torch::Tensor();
  const TermLayout c2p_layout(grad_c2p.defined() ? grad_c2p : torch::Tensor()),
      p2c_layout(grad_p2c.defined() ? grad_p2c : torch::Tensor());
  const float inverse_keep = static_cast<float>(1.0 / (1.0 - p));
  const uint8_t* kept = p > 0 ? keep.data_ptr<uint8_t>() : nullptr;
  AT_DISPATCH_FLOATING_TYPES_AND(at::kBFloat16, probs.scalar_type(), "relative_softmax_dropout_backward", [&] {
    const scalar_t* prob = probs.data_ptr<scalar_t>();
    const scalar_t* dpd = grad_dropped.data_ptr<scalar_t>();
    scalar_t* ds = grad_content.data_ptr<scalar_t>();
    scalar_t* d_query_rel = shape.c2p ? grad_c2p.data_ptr<scalar_t>() : nullptr;
    scalar_t* d_key_rel = shape.p2c ? grad_p2c.data_ptr<scalar_t>() : nullptr;
    at::parallel_for(0, heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> dp(static_cast<size_t>(S)), p32(static_cast<size_t>(S));
      std::vector<float> query_rel(d_query_rel ? static_cast<size_t>(S * W) : 0);
      std::vector<float> key_rel(d_key_rel ? static_cast<size_t>(S * W) : 0);
      for (int64_t head = begin; head < end; ++head) {
        std::fill(query_rel.begin(), query_rel.end(), 0.0f);
        std::fill(key_rel.begin(), key_rel.end(), 0.0f);
        for (int64_t i = 0; i < S; ++i) {
          const int64_t o = (head * S + i) * S;
          const int32_t* pair = index + i * S;
          load_row(dpd + o, dp.data(), S);
          load_row(prob + o, p32.data(), S);
          if (kept) row_keep_scale(dp.data(), kept + o, inverse_keep, S);
          row_softmax_backward(p32.data(), dp.data(), row_dot(p32.data(), dp.data(), S), scale, S);
          store_row(dp.data(), ds + o, S);
          if (d_query_rel) {
            float* r = query_rel.data() + i * W;
            for (int64_t j = 0; j < S; ++j) r[pair[j]] += dp[j];
          }
          if (d_key_rel) {
            for (int64_t j = 0; j < S; ++j) key_rel[j * W + pair[j]] += dp[j];
          }
        }
        if (d_query_rel) store_row(query_rel.data(), d_query_rel + c2p_layout.at(head, shape.heads), S * W);
        if (d_key_rel) store_row(key_rel.data(), d_key_rel + p2c_layout.at(head, shape.heads), S * W);
      }
    });
  });
  return {grad_content, grad_c2p, grad_p2c};
}

/// A tensor laid out as a term (sizes and strides; empty for no term), for its gradient.
torch::Tensor empty_like_term(const c10::IValue& sizes, const c10::IValue& strides, const torch::Tensor& like) {
  if (sizes.toIntVector().empty()) return torch::empty({0}, like.options());
  return torch::empty_strided(sizes.toIntVector(), strides.toIntVector(), like.options());
}

struct RelativeSoftmaxDropout : torch::autograd::Function<RelativeSoftmaxDropout> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& content, const torch::Tensor& c2p,
                               const torch::Tensor& p2c, const torch::Tensor& index, const torch::Tensor& bias,
                               double scale, double p) {
    const RelativeShape shape{content.size(0), content.size(1), content.size(-1),
                              c2p.numel() ? c2p.size(-1) : p2c.size(-1), c2p.numel() > 0, p2c.numel() > 0};
    auto probs = torch::empty_like(content);
    auto dropped = p > 0 ? torch::empty_like(content) : probs;
    auto keep = torch::empty(p > 0 ? content.sizes() : at::IntArrayRef{0}, content.options().dtype(torch::kUInt8));
    const auto bias32 = bias.to(torch::kFloat32).contiguous();
    const uint64_t seed = p > 0 ? next_mask_seed() : 0;
    relative_softmax_rows(content, c2p, p2c, index.data_ptr<int32_t>(), RelativeBiasRows(bias32, shape.seq), shape,
                          static_cast<float>(scale), p, seed, probs, dropped, keep);
    ctx->save_for_backward({probs, keep, index});
    // The terms themselves are not needed, only their layouts, for their gradients.
    for (const auto& [name, term] : {std::pair<const char*, const torch::Tensor*>{"c2p", &c2p}, {"p2c", &p2c}}) {
      const bool present = term->numel() > 0;
      ctx->saved_data[std::string(name) + "_sizes"] = present ? term->sizes().vec() : std::vector<int64_t>{};
      ctx->saved_data[std::string(name) + "_strides"] = present ? term->strides().vec() : std::vector<int64_t>{};
    }
    ctx->saved_data["p"] = p;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["width"] = shape.width;
    ctx->saved_data["c2p"] = shape.c2p;
    ctx->saved_data["p2c"] = shape.p2c;
    return dropped;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &probs = saved[0], &keep = saved[1], &index = saved[2];
    const RelativeShape shape{probs.size(0), probs.size(1), probs.size(-1), ctx->saved_data["width"].toInt(),
                              ctx->saved_data["c2p"].toBool(), ctx->saved_data["p2c"].toBool()};
    const auto grad_dropped = grads[0].to(probs.scalar_type()).contiguous();
    const auto c2p_like = empty_like_term(ctx->saved_data["c2p_sizes"], ctx->saved_data["c2p_strides"], probs);
    const auto p2c_like = empty_like_term(ctx->saved_data["p2c_sizes"], ctx->saved_data["p2c_strides"], probs);
    auto g = relative_softmax_backward(probs, keep, grad_dropped, index.data_ptr<int32_t>(), shape, c2p_like, p2c_like,
                                       static_cast<float>(ctx->saved_data["scale"].toDouble()),
                                       ctx->saved_data["p"].toDouble());
    return {g[0], g[1], g[2], torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor relative_softmax_dropout(const torch::Tensor& content, const torch::Tensor& c2p,
                                       const torch::Tensor& p2c, const torch::Tensor& index,
                                       const torch::Tensor& bias, double scale, double p) {
  if (!content.device().is_cpu()) return relative_softmax_dropout_reference(content, c2p, p2c, index, bias, scale, p);
  TORCH_CHECK(content.dim() == 4 && content.size(2) == content.size(3),
              "relative_softmax_dropout: content must be [B,A,S,S], got ", content.sizes());
  const bool relative = c2p.defined() || p2c.defined();
  if (relative) {
    TORCH_CHECK(index.defined() && index.dim() == 2 && index.size(0) == content.size(2) &&
                    index.size(1) == content.size(3) && index.scalar_type() == torch::kInt32,
                "relative_softmax_dropout: index must be [S,S] int32, got ",
                index.defined() ? index.sizes() : at::IntArrayRef{});
  }
  const auto dtype = content.scalar_type();
  // The relative terms in content's dtype (autocast gives all three products one dtype), and
  // no term as an empty tensor: autograd functions take no undefined inputs.
  const auto term = [&](const torch::Tensor& t) {
    if (!t.defined()) return torch::empty({0}, content.options());
    TORCH_CHECK(t.dim() == 4 && t.size(0) == content.size(0) && t.size(1) == content.size(1) &&
                    t.size(2) == content.size(2),
                "relative_softmax_dropout: a relative term must be [B,A,S,W], got ", t.sizes());
    const auto cast = t.to(dtype);
    return cast.stride(3) == 1 && cast.stride(2) == cast.size(3) && cast.is_non_overlapping_and_dense()
               ? cast
               : cast.contiguous();
  };
  const auto c2p_in = term(c2p), p2c_in = term(p2c);
  if (c2p.defined() && p2c.defined())
    TORCH_CHECK(c2p.size(3) == p2c.size(3), "relative_softmax_dropout: c2p and p2c widths differ: ", c2p.sizes(),
                p2c.sizes());
  const auto pairs = relative ? index.contiguous() : torch::empty({0}, content.options().dtype(torch::kInt32));
  return RelativeSoftmaxDropout::apply(content.contiguous(), c2p_in, p2c_in, pairs,
                                       bias.defined() ? bias : torch::empty({0}, content.options()), scale, p);
}

torch::Tensor relative_softmax_dropout_reference(const torch::Tensor& content, const torch::Tensor& c2p,
                                                 const torch::Tensor& p2c, const torch::Tensor& index,
                                                 const torch::Tensor& bias, double scale, double p) {
  auto scores = content.to(torch::kFloat32);
  const auto pairs = c2p.defined() || p2c.defined() ? index.to(torch::kLong).expand(content.sizes()) : torch::Tensor();
  if (c2p.defined()) scores = scores + torch::gather(c2p, -1, pairs).to(torch::kFloat32);
  // p2c[j, index[i,j]]: gathered as [key j, query i] (index transposed), then transposed back.
  if (p2c.defined()) scores = scores + torch::gather(p2c, -1, pairs.transpose(-1, -2)).transpose(-1, -2).to(torch::kFloat32);
  scores = scores * scale;
  if (bias.defined()) scores = scores + bias.to(torch::kFloat32);
  return kernels::dropout(torch::softmax(scores, -1), p, p > 0).to(content.scalar_type());
}

}  // namespace mlm::model::kernels

#pragma once
// DeBERTa's disentangled attention probabilities in one pass per score row, for the CPU.
// transformers (and the composition below) scores each query against all 2k relative
// embeddings, gathers the [S,S] columns the pairs need, divides and adds each term, casts,
// adds the mask, takes the softmax and draws the dropout: seven passes over [B,A,S,S] tensors
// and a gather backward that scatters into zeros of [B,A,S,2k]. Here
//   s[j] = (content[i,j] + c2p[i, index[i,j]] + p2c[j, index[i,j]]) * scale + bias[j]
//   P = softmax(s), Pd = P * keep / (1 - p)                     one kernel, fp32 inside
// reads c2p and p2c in place (each [B,A,S,W]: queries, or keys, against the W relative rows
// that S positions can read), and the backward is one kernel per head: the softmax and dropout
// backward, with d content, and d c2p and d p2c accumulated at the pairs' rows.
#include <torch/torch.h>

namespace mlm::model::kernels {

/// content [B,A,S,S] (q k^T, not yet scaled); c2p, p2c [B,A,S,W] (each may be undefined: no
/// such term); index [S,S] int32 in [0,W), the relative row of pair (query i, key j), the same
/// for c2p and p2c; bias additive, broadcastable to [B,1,S,S] ([B or 1, 1, S or 1, S]) or
/// undefined; dropout p on the probabilities (0 when not training). Returns Pd [B,A,S,S] in
/// content's dtype. CPU only: elsewhere relative_softmax_dropout_reference.
torch::Tensor relative_softmax_dropout(const torch::Tensor& content, const torch::Tensor& c2p,
                                       const torch::Tensor& p2c, const torch::Tensor& index,
                                       const torch::Tensor& bias, double scale, double p);

/// The ATen composition it replaces: the gathers (p2c's transposed), the sum times scale in
/// fp32, the bias, softmax and kernels::dropout (the same Philox mask for the same seed).
/// The reference of the tests and the path for devices without the kernel.
torch::Tensor relative_softmax_dropout_reference(const torch::Tensor& content, const torch::Tensor& c2p,
                                                 const torch::Tensor& p2c, const torch::Tensor& index,
                                                 const torch::Tensor& bias, double scale, double p);

}  // namespace mlm::model::kernels

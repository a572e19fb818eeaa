#pragma once
// The matrix products of a training step at a config's shape: the linear layers' products
// that a model-shape peak is measured at (peak_flops.h). Attention's score and value products
// (batched, S x S per head) and the embedding lookups are not among them.
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/run_config.h"

namespace mlm::train::bench {

/// A linear layer's forward product: activations [m, k] times the transposed weight [n, k],
/// out [m, n]. Its backward runs two more of the same FLOPs: the input gradient [m, n] x [n, k]
/// and the weight gradient [n, m] x [m, k].
struct GemmShape {
  std::string name;      // "qkv", "attention_out", "ffn_in", "ffn_out", "head_transform",
                         // "decoder", ...; "generator." before the generator's
  int64_t m = 0, k = 0, n = 0;
  int64_t per_step = 0;  // forward products of this shape in one step (layers x micro-batches)

  /// Forward + backward FLOPs of the step's products of this shape: 3 x 2·m·k·n x per_step.
  double step_flops() const;
};

/// The step's products of `config` (model.*, data.seq_len, train.micro_batch_size,
/// train.grad_accum_steps, masking.mlm_probability), with the decoder `vocab_rows` wide (the
/// padded vocabulary, config::padded_vocab_rows). m is micro_batch_size x seq_len tokens (the
/// synthetic batches have no padding), and the head's m is the expected masked count
/// (round(tokens x mlm_probability), at least 1) under model.sparse_head. Per layer: the QKV
/// projection H -> 3H (DeBERTa: three H -> H), the attention output H -> H, the feed-forward
/// H -> I (ModernBERT's GeGLU Wi: H -> 2I) and I -> H; an embedding projection E -> H where
/// the embeddings are E wide; the MLM head's transform and its decoder; objective rtd adds the
/// generator's products and the discriminator's H -> H head.
std::vector<GemmShape> model_gemm_shapes(const config::RunConfig& config, int64_t vocab_rows);

/// `vocab` rows padded to model.pad_vocab_multiple, as the models allocate them.
int64_t padded_vocab_rows(const config::ModelConfig& model, int64_t vocab);

}  // namespace mlm::train::bench

#include "mlm/train/tools/bench/model_gemm_shapes.h"

#include <algorithm>
#include <cmath>

#include "mlm/model/architectures.h"

namespace mlm::train::bench {

double GemmShape::step_flops() const {
  return 3.0 * 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n) *
         static_cast<double>(per_step);
}

int64_t padded_vocab_rows(const config::ModelConfig& model, int64_t vocab) {
  const int64_t multiple = std::max<int64_t>(1, model.pad_vocab_multiple);
  return (vocab + multiple - 1) / multiple * multiple;
}

std::vector<GemmShape> model_gemm_shapes(const config::RunConfig& config, int64_t vocab_rows) {
  const auto& model = config.model;
  const int64_t micro_batches = std::max<int64_t>(1, config.train.grad_accum_steps);
  const int64_t tokens = config.train.micro_batch_size * config.data.seq_len;
  const int64_t masked =
      model.sparse_head
          ? std::max<int64_t>(1, std::llround(static_cast<double>(tokens) * config.masking.mlm_probability))
          : tokens;
  // Embeddings narrower than the layers (ELECTRA, DeBERTa's embedding_size): each network
  // projects them up, and the MLM head's transform brings the hidden states back down to E.
  const int64_t factorized = config::factorized_embedding_size(model);
  const auto& spec = model::architecture_spec(model.architecture);
  const bool split_qkv = spec.separate_qkv_products();  // DeBERTa: q, k, v apart

  std::vector<GemmShape> shapes;
  const auto add = [&](const std::string& name, int64_t m, int64_t k, int64_t n, int64_t count) {
    if (count > 0) shapes.push_back({name, m, k, n, count * micro_batches});
  };
  const auto network = [&](const std::string& prefix, const config::ModelConfig& shape) {
    const int64_t hidden = shape.hidden_size, layers = shape.num_hidden_layers, intermediate = shape.intermediate_size;
    if (factorized > 0 && factorized != hidden) add(prefix + "embedding_projection", tokens, factorized, hidden, 1);
    if (split_qkv) {
      add(prefix + "q_k_v", tokens, hidden, hidden, 3 * layers);
    } else {
      add(prefix + "qkv", tokens, hidden, 3 * hidden, layers);
    }
    add(prefix + "attention_out", tokens, hidden, hidden, layers);
    add(prefix + "ffn_in", tokens, hidden, spec.feed_forward_in_width(shape), layers);  // GeGLU: 2I
    add(prefix + "ffn_out", tokens, intermediate, hidden, layers);
  };
  const auto mlm_head = [&](const std::string& prefix, int64_t hidden) {
    const int64_t width = factorized > 0 ? factorized : hidden;
    add(prefix + "head_transform", masked, hidden, width, 1);
    add(prefix + "decoder", masked, width, vocab_rows, 1);
  };

  if (model.objective == config::Objective::rtd) {
    const auto g = config::generator_shape(model);
    auto generator = model;  // the discriminator's config at the generator's shape
    generator.hidden_size = g.hidden_size;
    generator.num_hidden_layers = g.num_hidden_layers;
    generator.intermediate_size = g.intermediate_size;
    network("generator.", generator);
    mlm_head("generator.", g.hidden_size);
    network("", model);
    add("rtd_head", tokens, model.hidden_size, model.hidden_size, 1);  // then H -> 1
  } else {
    network("", model);
    mlm_head("", model.hidden_size);
  }
  return shapes;
}

}  // namespace mlm::train::bench

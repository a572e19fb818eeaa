#include "mlm/train/tools/bench/model_flops.h"

#include <algorithm>

#include "mlm/model/electra/electra.h"

namespace mlm::train::bench {
namespace {

// BERT layers of `m`'s shape over sequences of S tokens, per token: Q, K, V, O (4H^2), the
// feed-forward (2HI), attention scores and context (2SH), 2 FLOPs per multiply-add.
double bert_layers_flops(const config::ModelConfig& m, double S) {
  const double h = static_cast<double>(m.hidden_size), i = static_cast<double>(m.intermediate_size);
  return 2 * static_cast<double>(m.num_hidden_layers) * (4 * h * h + 2 * h * i + 2 * S * h);
}

}  // namespace

double forward_flops_per_token(const config::ModelConfig& model, int64_t seq_len, int64_t vocab,
                               double mlm_probability) {
  const double L = static_cast<double>(model.num_hidden_layers);
  const double H = static_cast<double>(model.hidden_size);
  const double I = static_cast<double>(model.intermediate_size);
  const double S = static_cast<double>(seq_len);
  const double V = static_cast<double>(vocab);
  const double p = model.sparse_head ? mlm_probability : 1.0;
  if (model.architecture == config::Architecture::electra) {
    // Embedding projection E -> H, BERT layers; the generator's head H -> E and decoder E x V
    // on the selected positions; under rtd the discriminator too, its head (H^2 + H) on every
    // token. The sampling's work is O(p V) per token, left out like the loss's.
    const double E = static_cast<double>(config::electra_embedding_size(model));
    const auto layers = [&](const config::ModelConfig& m) {
      const double h = static_cast<double>(m.hidden_size);
      return 2 * (h == E ? 0 : E * h) + bert_layers_flops(m, S);
    };
    if (model.objective != config::Objective::rtd) return layers(model) + 2 * p * (H * E + E * V);
    const auto g = model::generator_config(model);
    const double gh = static_cast<double>(g.hidden_size);
    return layers(g) + 2 * p * (gh * E + E * V) + layers(model) + 2 * (H * H + H);
  }
  const double head = 2 * p * (H * H + H * V);
  if (model.architecture == config::Architecture::modernbert) {
    // Wqkv + Wo: 4H^2; GeGLU Wi (H x 2I) + Wo: 3HI. A local layer's query sees at most
    // local_attention + 1 keys: the model's work (what runs is all S keys under a mask, or
    // 2 * local_attention when the layer goes block by block: local_attention.h).
    double attention = 0;
    for (int64_t i = 0; i < model.num_hidden_layers; ++i) {
      const bool global = i % model.global_attn_every_n_layers == 0;
      attention += 4 * H * (global ? S : std::min<double>(S, static_cast<double>(model.local_attention + 1)));
    }
    return 2 * L * (4 * H * H + 3 * H * I) + attention + head;
  }
  return bert_layers_flops(model, S) + head;
}

}  // namespace mlm::train::bench

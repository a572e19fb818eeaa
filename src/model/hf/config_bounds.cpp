// A config.json's shape is checked before a model is built from it: the dimensions a damaged
// or hostile file gives (hidden_size 1e9) would otherwise be allocated first and fail after,
// as std::bad_alloc or the machine swapping, with no word of the file.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>

#include "config_json.h"

namespace mlm::model {
namespace config_bounds_detail {

// The fp32 parameters a model of this shape holds, in double: the dimensions are a file's and
// their products may pass int64. Within a few percent of the built model's parameters (biases and norms
// are the terms left out), which is all a refusal against the machine's memory needs.
double network_parameters(const config::ModelConfig& c, double vocab_rows, double hidden, double layers,
                          double intermediate) {
  const bool modernbert = c.architecture == config::Architecture::modernbert;
  const double embedding = c.architecture == config::Architecture::electra && c.embedding_size > 0
                               ? static_cast<double>(c.embedding_size)
                               : hidden;
  double embeddings = vocab_rows * embedding;  // tied with the decoder
  if (!modernbert) {
    embeddings += (static_cast<double>(c.max_position_embeddings) + static_cast<double>(c.type_vocab_size)) * embedding;
  }
  if (embedding != hidden) embeddings += embedding * hidden;
  // Attention (q, k, v, out) and the feed-forward (ModernBERT's gated Wi is twice as tall).
  const double layer = 4 * hidden * hidden + (modernbert ? 3 : 2) * hidden * intermediate;
  const double head = hidden * embedding + vocab_rows;
  return embeddings + layers * layer + head;
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

}  // namespace config_bounds_detail

double estimated_parameters(const config::ModelConfig& c, int64_t vocab_rows) {
  using config_bounds_detail::network_parameters;
  const double rows = static_cast<double>(vocab_rows);
  double total = network_parameters(c, rows, static_cast<double>(c.hidden_size),
                                    static_cast<double>(c.num_hidden_layers), static_cast<double>(c.intermediate_size));
  if (c.objective == config::Objective::rtd) {
    const auto g = config::generator_shape(c);
    total += network_parameters(c, rows, static_cast<double>(g.hidden_size), static_cast<double>(g.num_hidden_layers),
                                static_cast<double>(g.intermediate_size));
  }
  return total;
}

void require_buildable_shape(const config::ModelConfig& c, const std::string& path) {
  const auto refuse = [&](const char* key, int64_t value, const std::string& why) {
    throw CheckpointError(fmt::format("{}: {} {} {}", path, key, value, why));
  };
  const std::pair<const char*, int64_t> at_least_one[] = {
      {"hidden_size", c.hidden_size}, {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads}, {"intermediate_size", c.intermediate_size},
      {"max_position_embeddings", c.max_position_embeddings}, {"type_vocab_size", c.type_vocab_size}};
  for (const auto& [key, value] : at_least_one)
    if (value < 1) refuse(key, value, "must be at least 1");
  // 0 is allowed for these two (absent from config.json reads as 0): only negatives are refused.
  if (c.vocab_size < 0) refuse("vocab_size", c.vocab_size, "must be >= 0 (0: the tokenizer's size)");
  if (c.embedding_size < 0) refuse("embedding_size", c.embedding_size, "must be >= 0 (0: the hidden size)");
  if (c.hidden_size % c.num_attention_heads != 0)
    refuse("hidden_size", c.hidden_size,
           fmt::format("is not divisible by num_attention_heads {}: no head width", c.num_attention_heads));
  // The memory the weights alone take (fp32; the tokenizer's rows when vocab_size is absent,
  // at least one): a model that cannot be built on this machine is refused before it is tried.
  // Bounded by the machine, not by a constant, so a model of several billion parameters loads
  // where memory allows it.
  const double memory = config_bounds_detail::physical_memory_bytes();
  const double bytes = 4 * estimated_parameters(c, std::max<int64_t>(1, c.vocab_size));
  if (memory > 0 && bytes > memory) {
    throw CheckpointError(fmt::format(
        "{}: hidden_size {}, num_hidden_layers {}, intermediate_size {}, vocab_size {} describe {:.3g} parameters "
        "({:.3g} GB in fp32), more than this machine's {:.3g} GB of memory",
        path, c.hidden_size, c.num_hidden_layers, c.intermediate_size, c.vocab_size, bytes / 4, bytes / 1e9,
        memory / 1e9));
  }
}

}  // namespace mlm::model

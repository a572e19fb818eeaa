// A config.json's shape is checked before a model is built from it: the dimensions a damaged
// or hostile file gives (hidden_size 1e9) would otherwise be allocated first and fail after,
// as std::bad_alloc or the machine swapping, with no word of the file.
#include "mlm/model/pretrained/model_shape.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>

#include "mlm/config/architecture_keys.h"
#include "mlm/model/architectures.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace model_shape_detail {

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

}  // namespace model_shape_detail

double estimated_parameters(const config::ModelConfig& c, int64_t vocab_rows) {
  return architecture_spec(c.architecture).estimated_parameters(c, static_cast<double>(vocab_rows));
}

void require_buildable_shape(const config::ModelConfig& c, const std::string& path) {
  const auto refuse = [&](const char* key, int64_t value, const std::string& why) {
    throw CheckpointError(fmt::format("{}: {} {} {}", path, key, value, why));
  };
  const std::pair<const char*, int64_t> at_least_one[] = {
      {"hidden_size", c.hidden_size}, {"num_hidden_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads}, {"intermediate_size", c.intermediate_size},
      {"max_position_embeddings", c.max_position_embeddings}};
  for (const auto& [key, value] : at_least_one)
    if (value < 1) refuse(key, value, "must be at least 1");
  const int64_t fewest_types = config::architecture_keys(c.architecture).min_type_vocab_size();
  if (c.type_vocab_size < fewest_types)
    refuse("type_vocab_size", c.type_vocab_size, "must be at least " + std::to_string(fewest_types));
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
  const double memory = model_shape_detail::physical_memory_bytes();
  const double bytes = 4 * estimated_parameters(c, std::max<int64_t>(1, c.vocab_size));
  if (memory > 0 && bytes > memory) {
    throw CheckpointError(fmt::format(
        "{}: hidden_size {}, num_hidden_layers {}, intermediate_size {}, vocab_size {} describe {:.3g} parameters "
        "({:.3g} GB in fp32), more than this machine's {:.3g} GB of memory",
        path, c.hidden_size, c.num_hidden_layers, c.intermediate_size, c.vocab_size, bytes / 4, bytes / 1e9,
        memory / 1e9));
  }
}

std::string shape_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs) {
  struct ShapeField {
    const char* hf_key;
    int64_t ours, theirs;
  };
  const ShapeField fields[] = {
      {"vocab_size", ours.vocab_size, theirs.vocab_size},
      {"embedding_size", config::factorized_embedding_size(ours), config::factorized_embedding_size(theirs)},
      {"hidden_size", ours.hidden_size, theirs.hidden_size},
      {"num_hidden_layers", ours.num_hidden_layers, theirs.num_hidden_layers},
      {"num_attention_heads", ours.num_attention_heads, theirs.num_attention_heads},
      {"intermediate_size", ours.intermediate_size, theirs.intermediate_size},
      {"max_position_embeddings", ours.max_position_embeddings, theirs.max_position_embeddings},
      {"type_vocab_size", ours.type_vocab_size, theirs.type_vocab_size},
      {"global_attn_every_n_layers", ours.global_attn_every_n_layers, theirs.global_attn_every_n_layers},
      {"local_attention", ours.local_attention, theirs.local_attention}};
  std::string differences;
  for (const auto& f : fields)
    if (f.theirs != f.ours)
      differences += fmt::format("{}{} {} (set model.{}: {})", differences.empty() ? "" : ", ", f.hf_key, f.theirs,
                                 f.hf_key, f.ours);
  return differences;
}

}  // namespace mlm::model

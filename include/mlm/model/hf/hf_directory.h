#pragma once
// A Hugging Face model directory as `save_pretrained` (or mlm-export) leaves it: config.json
// and the weights as model.safetensors, pytorch_model.bin, or either one sharded with an
// index (model.safetensors.index.json, pytorch_model.bin.index.json). mlm-train's own
// checkpoints hold model.pt, which is read the same way.
#include <nlohmann/json.hpp>

#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/hf/new_token_rows.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The weight file (or shard index) a directory's weights are read from, in the order
/// `transformers` prefers them; "" when the directory holds none.
std::string find_hf_weights(const std::string& dir);

/// Every tensor of the directory's weights (all shards of an index). CheckpointError naming
/// the file: no weights, an index naming a shard that is missing or lacks the tensor, a
/// tensor found twice, or a damaged file.
TensorDict read_hf_weights(const std::string& dir);

/// The model settings config.json describes: BertConfig fields ("mlm_train_norm": "pre" for a
/// pre-LN export), the same under model_type roberta or xlm-roberta (architecture roberta,
/// xlm_roberta) or, for model_type modernbert, ModernBertConfig fields; on top of `base` for
/// what it does not say. CheckpointError naming the file for a config.json that cannot be
/// parsed, is neither model type, or has a field of the wrong type or a value mlm-train does
/// not compute.
config::ModelConfig model_config_from_hf(const std::string& config_json, config::ModelConfig base);

/// config.json (at `config_path`, read into `c`) against the weights beside it, before a model
/// is built from it: the tensors that carry a dimension (word, position and token-type
/// embeddings, the first layer's query and feed-forward; ModernBERT's too) have the shape it
/// gives, and the layer keys number num_hidden_layers. CheckpointError naming config.json, the
/// key, its value, the weight file and the tensor's shape. Tensors it lacks are not checked
/// (the load names them).
void require_config_matches_weights(const config::ModelConfig& c, const TensorDict& weights,
                                    const std::string& config_path, const std::string& weights_path);

/// RoBERTa numbers positions from pad_token_id + 1, so weights trained with another padding id
/// would read every position shifted: CheckpointError naming `config_json` and both ids when
/// its model_type is roberta or xlm-roberta and its pad_token_id differs from `pad_id` (the
/// tokenizer's). Nothing for the other model types or without pad_token_id.
void require_same_pad_id(const std::string& config_json, int64_t pad_id);

/// model.init_from: loads the directory's weights into `model`. When DIR/config.json exists,
/// its architecture and every shape field it gives (hidden_size, layers, heads,
/// intermediate_size, positions, token types, vocab_size; ModernBERT's global layer period and
/// local window) must equal the model's: one CheckpointError lists each difference
/// with the config key to change. Other differing fields (activation, epsilon) are warnings.
/// `new_tokens` (tokenizer.add_tokens): the directory's vocabulary may have fewer rows than the
/// model, as long as it has every row before the first new id; the vocabulary tensors grow to
/// the model's rows with each new token's row the mean of its pieces' (new_token_rows.h).
/// Not for an ELECTRA generator/discriminator pair (CheckpointError).
void init_from_pretrained(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens = {});

}  // namespace mlm::model

#pragma once
// model.init_from: a pretrained model's weights into the model a run builds.
#include <string>
#include <vector>

#include "mlm/model/masked_lm.h"
#include "mlm/model/pretrained/new_token_rows.h"

namespace mlm::model {

/// Loads the pretrained directory `dir` into `model`, through the spec of the architecture
/// whose own layout `dir` is (an ELECTRA generator/ + discriminator/ pair), else the model's.
/// CheckpointError naming the directory or file for anything that does not fit.
void init_from_pretrained(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens = {});

/// A Hugging Face model directory (config.json and weights) into `model`: what an
/// architecture's init_from does unless it has a layout of its own. When DIR/config.json
/// exists, its architecture and every shape field it gives (hidden_size, layers, heads,
/// intermediate_size, positions, token types, vocab_size; ModernBERT's global layer period and
/// local window) must equal the model's: one CheckpointError lists each difference with the
/// config key to change. Other differing fields (activation, epsilon, RoPE bases, norm
/// position) are warnings. `new_tokens` (tokenizer.add_tokens): the directory's vocabulary may
/// have fewer rows than the model, as long as it has every row before the first new id; the
/// vocabulary tensors grow to the model's rows with each new token's row the mean of its
/// pieces' (new_token_rows.h).
void load_hf_directory(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens);

}  // namespace mlm::model

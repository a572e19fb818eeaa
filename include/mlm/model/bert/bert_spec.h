#pragma once
// The BERT family's architecture specs (BERT; RoBERTa and XLM-R, the same model under
// RobertaForMaskedLM's names), and the counts ELECTRA, built of the same layers, shares.
#include <vector>

#include "mlm/config/sections/model.h"
#include "mlm/model/architecture_spec.h"

namespace mlm::model {

const ArchitectureSpec& bert_spec();
const ArchitectureSpec& roberta_spec();
const ArchitectureSpec& xlm_roberta_spec();

/// Forward FLOPs per token of `m`'s BERT layers over sequences of S tokens: Q, K, V, O (4H^2),
/// the feed-forward (2HI), attention scores and context (2SH), 2 FLOPs per multiply-add.
double bert_layers_flops(const config::ModelConfig& m, double seq_len);

/// The fp32 parameters of one BERT-family network (absolute positions, token types,
/// embeddings `embedding` wide, projected to `hidden` when narrower), its MLM head included.
double bert_network_parameters(const config::ModelConfig& c, double vocab_rows, double embedding, double hidden,
                               double layers, double intermediate);

/// The BERT-family tensors that carry config.json's dimensions, the word embeddings
/// `embedding` wide (`embedding_key` names where config.json gives that width).
std::vector<WeightDimension> bert_weight_dimensions(const config::ModelConfig& c, int64_t embedding,
                                                    const char* embedding_key);

}  // namespace mlm::model

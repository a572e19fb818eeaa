#pragma once
// DebertaV2ForMaskedLM's two MLM-head layouts in transformers: the legacy cls.predictions.*
// (transform.{dense,LayerNorm}, bias, the decoder tied to the word embeddings; config.json
// legacy true, the default) and lm_predictions.lm_head.{dense,LayerNorm,bias} (legacy false,
// and what the hub's microsoft/deberta-v3-* checkpoints hold). Both compute dense, activation,
// LayerNorm, the tied decoder and a bias; mlm-train's module tree carries the legacy names,
// so a file in the other layout is renamed on the way in (deberta_head_layouts.cpp).
#include <string>

#include "mlm/model/tensor_dict.h"

namespace mlm::model {

/// The non-legacy head's prefix, "lm_predictions.lm_head.".
extern const char* const kDebertaLmHeadPrefix;

/// `state` with lm_predictions.lm_head.{dense,LayerNorm}.* and .bias under their legacy names
/// (cls.predictions.transform.{dense,LayerNorm}.*, cls.predictions.bias); every other key as
/// it was. CheckpointError naming `origin` when the file holds both layouts.
TensorDict with_legacy_head_keys(TensorDict state, const std::string& origin);

}  // namespace mlm::model

#include "mlm/model/deberta/deberta_head_layouts.h"

#include <utility>

#include "mlm/util/errors.h"

namespace mlm::model {

const char* const kDebertaLmHeadPrefix = "lm_predictions.lm_head.";

namespace {

// The non-legacy head's tensors and their legacy names (transformers' DebertaV2LMPredictionHead
// against LegacyDebertaV2LMPredictionHead).
const std::pair<const char*, const char*> kLmHeadRenames[] = {
    {"lm_predictions.lm_head.dense.weight", "cls.predictions.transform.dense.weight"},
    {"lm_predictions.lm_head.dense.bias", "cls.predictions.transform.dense.bias"},
    {"lm_predictions.lm_head.LayerNorm.weight", "cls.predictions.transform.LayerNorm.weight"},
    {"lm_predictions.lm_head.LayerNorm.bias", "cls.predictions.transform.LayerNorm.bias"},
    {"lm_predictions.lm_head.bias", "cls.predictions.bias"},
};

const char* legacy_name_of(const std::string& key) {
  for (const auto& [from, to] : kLmHeadRenames)
    if (key == from) return to;
  return nullptr;
}

}  // namespace

TensorDict with_legacy_head_keys(TensorDict state, const std::string& origin) {
  std::string legacy_key, lm_head_key;
  for (const auto& [key, tensor] : state) {
    if (key.rfind("cls.predictions.", 0) == 0 && legacy_key.empty()) legacy_key = key;
    if (legacy_name_of(key) && lm_head_key.empty()) lm_head_key = key;
  }
  if (!legacy_key.empty() && !lm_head_key.empty())
    throw CheckpointError(origin + ": holds two MLM heads, " + legacy_key + " (transformers' legacy layout) and " +
                          lm_head_key + " (legacy false); a DeBERTa masked LM has one");
  for (auto& [key, tensor] : state)
    if (const char* legacy = legacy_name_of(key)) key = legacy;
  return state;
}

}  // namespace mlm::model

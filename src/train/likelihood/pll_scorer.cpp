#include "mlm/train/likelihood/pll_scorer.h"

#include "mlm/model/rtd/rtd_pair.h"
#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/util/errors.h"

namespace mlm::train::likelihood {
namespace {

/// The network whose predictions are scored: an RTD pair's generator, else the model itself.
model::MaskedLm masked_lm_of(model::MaskedLm model) {
  if (auto* pair = model->rtd_pair()) return model::MaskedLm(std::static_pointer_cast<model::MaskedLmImpl>(pair->generator));
  return model;
}

bool is_target(int64_t id, const text::SpecialIds& ids) { return id != ids.cls && id != ids.sep && id != ids.pad; }

}  // namespace

PllVariant parse_pll_variant(const std::string& name, const std::string& what) {
  if (name == "original") return PllVariant::original;
  if (name == "within_word_l2r") return PllVariant::within_word_l2r;
  throw UsageError(what + ": '" + name + "' is not a variant (original, within_word_l2r)");
}

const char* to_string(PllVariant variant) {
  return variant == PllVariant::original ? "original" : "within_word_l2r";
}

PllScorer::PllScorer(model::MaskedLm model, text::Tokenizer tokenizer, int64_t max_batch_tokens)
    : mlm_(masked_lm_of(model)),
      tokenizer_(std::move(tokenizer)),
      max_length_(mlm_->max_sequence_length()),
      max_batch_tokens_(max_batch_tokens) {}

EncodedSentence PllScorer::encode(std::string_view text) const {
  std::vector<int32_t> pieces;
  std::vector<uint8_t> starts;
  if (const auto* hf = tokenizer_.hf()) {
    hf->encode(text, pieces, &starts);  // pre-token starts, as word_ids() groups them
  } else {  // sentencepiece ("▁") and WordPiece ("##"): a piece tells by itself
    tokenizer_.encode(text, pieces);
    for (const int32_t id : pieces) starts.push_back(tokenizer_.vocab().starts_word[static_cast<size_t>(id)]);
  }
  const auto& special = tokenizer_.vocab().ids;
  EncodedSentence out;
  out.ids.reserve(pieces.size() + 2);
  out.ids.push_back(special.cls);
  out.ids.insert(out.ids.end(), pieces.begin(), pieces.end());
  out.ids.push_back(special.sep);
  out.starts_word.push_back(1);
  out.starts_word.insert(out.starts_word.end(), starts.begin(), starts.end());
  out.starts_word.push_back(1);
  return out;
}

SentenceScore PllScorer::score(const EncodedSentence& sentence, PllVariant variant) {
  const auto length = static_cast<int64_t>(sentence.ids.size());
  if (length > max_length_) {
    throw UsageError(std::to_string(length) + " tokens, more than the model's " + std::to_string(max_length_) +
                     " positions");
  }
  const auto& special = tokenizer_.vocab().ids;
  std::vector<int64_t> targets;
  for (int64_t i = 0; i < length; ++i)
    if (is_target(sentence.ids[static_cast<size_t>(i)], special)) targets.push_back(i);
  SentenceScore out;
  out.tokens = static_cast<int64_t>(targets.size());
  if (targets.empty()) return out;

  // A word is a start piece and the pieces after it up to the next start; specials are words
  // of their own. within_word_l2r masks, with target t, the later pieces of t's word (up to the
  // last target, as minicons does).
  std::vector<int64_t> word(static_cast<size_t>(length));
  for (int64_t i = 0, w = -1; i < length; ++i) {
    const auto id = sentence.ids[static_cast<size_t>(i)];
    if (sentence.starts_word[static_cast<size_t>(i)] || !is_target(id, special) || i == 0) ++w;
    word[static_cast<size_t>(i)] = w;
  }

  const bool was_training = mlm_->is_training();
  mlm_->eval();
  torch::NoGradGuard no_grad;
  const auto device = mlm_->parameters().front().device();
  const auto ids = torch::tensor(sentence.ids, torch::kInt64);
  const int64_t rows_per_forward = std::max<int64_t>(1, max_batch_tokens_ / length);
  const auto count = static_cast<int64_t>(targets.size());
  for (int64_t first = 0; first < count; first += rows_per_forward) {
    const int64_t rows = std::min(rows_per_forward, count - first);
    auto batch = ids.unsqueeze(0).repeat({rows, 1});
    auto* data = batch.data_ptr<int64_t>();
    std::vector<int64_t> positions, labels;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t t = targets[static_cast<size_t>(first + r)];
      data[r * length + t] = special.mask;
      if (variant == PllVariant::within_word_l2r) {
        for (int64_t j = t + 1; j <= targets.back() && word[static_cast<size_t>(j)] == word[static_cast<size_t>(t)]; ++j)
          data[r * length + j] = special.mask;
      }
      positions.push_back(r * length + t);
      labels.push_back(sentence.ids[static_cast<size_t>(t)]);
    }
    model::MlmInputs inputs;
    inputs.input_ids = batch.to(device);
    inputs.has_padding = false;
    inputs.masked_positions = torch::tensor(positions, torch::kInt64).to(device);
    inputs.masked_labels = torch::tensor(labels, torch::kInt64).to(device);
    inputs.max_selected_in_row = 1;
    const auto logits = mlm_->forward(inputs, /*return_logits=*/true).mlm_logits.to(torch::kFloat32);
    const auto log_probs = torch::log_softmax(logits, -1).gather(1, inputs.masked_labels.unsqueeze(1));
    out.log_prob += log_probs.to(torch::kFloat64).sum().item<double>();
  }
  if (was_training) mlm_->train();
  return out;
}

}  // namespace mlm::train::likelihood

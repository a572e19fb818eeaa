// mlm-fill: the model's predictions for the [MASK]s of a few texts, as `transformers`'
// fill-mask pipeline gives them.
#include <torch/torch.h>

#include "mlm/train/tools/commands.h"
#include "mlm/train/checkpoint/saved_model.h"
#include "mlm/util/errors.h"

namespace mlm::train {
namespace {

constexpr std::string_view kMaskText = "[MASK]";

/// [CLS] text [SEP] with each literal [MASK] as the mask id. The pieces between masks are
/// encoded on their own, as `tokenizers` does around a special token.
std::vector<int64_t> encode_with_masks(const text::Tokenizer& tokenizer, std::string_view text) {
  const auto& ids = tokenizer.vocab().ids;
  std::vector<int64_t> out = {ids.cls};
  std::vector<int32_t> piece;
  for (;;) {
    const size_t at = text.find(kMaskText);
    tokenizer.encode(text.substr(0, at), piece);
    out.insert(out.end(), piece.begin(), piece.end());
    if (at == std::string_view::npos) break;
    out.push_back(ids.mask);
    text.remove_prefix(at + kMaskText.size());
  }
  out.push_back(ids.sep);
  return out;
}

}  // namespace

std::vector<FilledText> fill_masks(const std::filesystem::path& dir, const std::vector<std::string>& texts,
                                   int64_t top_k) {
  auto saved = open_saved_model(dir, config::RunConfig{});
  auto& model = saved.model;
  model->eval();
  torch::NoGradGuard no_grad;
  top_k = std::min(top_k, model->vocab_size());
  std::vector<FilledText> out;
  for (size_t t = 0; t < texts.size(); ++t) {
    const auto ids = encode_with_masks(saved.tokenizer, texts[t]);
    std::vector<int64_t> masked;
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == saved.tokenizer.vocab().ids.mask) masked.push_back(static_cast<int64_t>(i));
    if (masked.empty()) throw UsageError("text " + std::to_string(t + 1) + " has no [MASK]: " + texts[t]);
    if (static_cast<int64_t>(ids.size()) > model->max_sequence_length())
      throw UsageError("text " + std::to_string(t + 1) + " is " + std::to_string(ids.size()) +
                       " tokens, more than the model's " + std::to_string(model->max_sequence_length()) +
                       " positions");
    model::MlmInputs inputs;
    inputs.input_ids = torch::tensor(ids, torch::kInt64).unsqueeze(0);
    inputs.has_padding = false;
    inputs.masked_positions = torch::tensor(masked, torch::kInt64);
    inputs.masked_labels = inputs.input_ids.flatten().index_select(0, inputs.masked_positions);
    const auto probs = torch::softmax(model->forward(inputs, /*return_logits=*/true).mlm_logits, -1);
    const auto [scores, tokens] = probs.topk(top_k, -1);
    FilledText filled{texts[t], {}};
    for (int64_t m = 0; m < scores.size(0); ++m) {
      auto& predictions = filled.masks.emplace_back();
      for (int64_t k = 0; k < top_k; ++k) {
        const auto id = static_cast<int32_t>(tokens[m][k].item<int64_t>());
        predictions.push_back({id, saved.tokenizer.decode({id}), scores[m][k].item<double>()});
      }
    }
    out.push_back(std::move(filled));
  }
  return out;
}

}  // namespace mlm::train

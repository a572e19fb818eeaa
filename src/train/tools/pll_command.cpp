#include "mlm/train/tools/pll_command.h"

#include <optional>

#include <torch/torch.h>

#include "mlm/train/likelihood/pll_corpus.h"
#include "mlm/train/checkpoint/saved_model.h"

namespace mlm::train {

nlohmann::json score_pseudo_likelihood(const config::RunConfig& config, const std::filesystem::path& dir,
                                       const PllRequest& request) {
  using namespace likelihood;
  const auto variant = parse_pll_variant(request.variant, "--variant");
  // The files first: a bad line is reported before the model is read.
  std::vector<Sentence> sentences;
  std::vector<MinimalPair> pairs;
  if (!request.sentences_file.empty()) sentences = read_sentences(request.sentences_file, request.max_items);
  if (!request.minimal_pairs_file.empty()) pairs = read_minimal_pairs(request.minimal_pairs_file, request.max_items);
  if (request.threads > 0) torch::set_num_threads(static_cast<int>(request.threads));
  auto saved = open_saved_model(dir, config);
  PllScorer scorer(saved.model, saved.tokenizer);
  nlohmann::json out = {{"checkpoint", dir.string()}};
  if (saved.step) out["step"] = *saved.step;
  if (!sentences.empty())
    out["pll"] = score_sentences(scorer, sentences, variant, request.sentences_file).to_json(variant, true);
  if (!pairs.empty())
    out["minimal_pairs"] = score_minimal_pairs(scorer, pairs, variant, request.minimal_pairs_file).to_json(variant, true);
  return out;
}

}  // namespace mlm::train

#include "mlm/train/likelihood/pll_corpus.h"

#include <cmath>

#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"

namespace mlm::train::likelihood {
namespace {

EncodedSentence checked_encoding(const PllScorer& scorer, const std::string& text, const std::string& path,
                                 int64_t line) {
  auto encoded = scorer.encode(text);
  const auto length = static_cast<int64_t>(encoded.ids.size());
  if (length > scorer.max_length()) {
    throw DataError(path + ":" + std::to_string(line) + ": " + std::to_string(length) +
                    " tokens with [CLS] and [SEP], more than the model's " + std::to_string(scorer.max_length()) +
                    " positions (split or shorten the sentence)");
  }
  if (length == 2) throw DataError(path + ":" + std::to_string(line) + ": the sentence has no tokens");
  return encoded;
}

}  // namespace

void check_sentences(const PllScorer& scorer, const std::vector<Sentence>& sentences, const std::string& path) {
  for (const auto& s : sentences) checked_encoding(scorer, s.text, path, s.line);
}

void check_minimal_pairs(const PllScorer& scorer, const std::vector<MinimalPair>& pairs, const std::string& path) {
  for (const auto& p : pairs) {
    checked_encoding(scorer, p.good, path, p.line);
    checked_encoding(scorer, p.bad, path, p.line);
  }
}

double PllCorpusScore::pseudo_perplexity() const {
  return tokens == 0 ? 0.0 : std::exp(-log_prob / static_cast<double>(tokens));
}

nlohmann::json PllCorpusScore::to_json(PllVariant variant, bool per_sentence) const {
  nlohmann::json out = {{"variant", to_string(variant)},
                        {"sentences", sentences.size()},
                        {"tokens", tokens},
                        {"pseudo_log_likelihood", log_prob},
                        {"pseudo_perplexity", pseudo_perplexity()},
                        {"seconds", seconds},
                        {"sentences_per_s", seconds > 0 ? static_cast<double>(sentences.size()) / seconds : 0.0}};
  if (per_sentence) {
    auto rows = nlohmann::json::array();
    for (const auto& s : sentences) rows.push_back({{"line", s.line}, {"pll", s.score.log_prob}, {"tokens", s.score.tokens}});
    out["scores"] = std::move(rows);
  }
  return out;
}

double MinimalPairsScore::accuracy() const {
  return pairs.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(pairs.size());
}

nlohmann::json MinimalPairsScore::to_json(PllVariant variant, bool per_pair) const {
  auto phenomena_json = nlohmann::json::object();
  for (const auto& [name, count] : phenomena) {
    phenomena_json[name] = {{"pairs", count.pairs},
                            {"accuracy", static_cast<double>(count.correct) / static_cast<double>(count.pairs)}};
  }
  nlohmann::json out = {{"variant", to_string(variant)}, {"pairs", pairs.size()}, {"accuracy", accuracy()},
                        {"phenomena", std::move(phenomena_json)}, {"seconds", seconds}};
  if (per_pair) {
    auto rows = nlohmann::json::array();
    for (const auto& p : pairs)
      rows.push_back({{"line", p.line}, {"good", p.good}, {"bad", p.bad}, {"correct", p.correct()}});
    out["scores"] = std::move(rows);
  }
  return out;
}

PllCorpusScore score_sentences(PllScorer& scorer, const std::vector<Sentence>& sentences, PllVariant variant,
                               const std::string& path) {
  const auto start = SteadyClock::now();
  std::vector<EncodedSentence> encoded;
  encoded.reserve(sentences.size());
  for (const auto& s : sentences) encoded.push_back(checked_encoding(scorer, s.text, path, s.line));
  PllCorpusScore out;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const auto score = scorer.score(encoded[i], variant);
    out.sentences.push_back({sentences[i].line, score});
    out.log_prob += score.log_prob;
    out.tokens += score.tokens;
  }
  out.seconds = seconds_since(start);
  return out;
}

MinimalPairsScore score_minimal_pairs(PllScorer& scorer, const std::vector<MinimalPair>& pairs, PllVariant variant,
                                      const std::string& path) {
  const auto start = SteadyClock::now();
  std::vector<std::pair<EncodedSentence, EncodedSentence>> encoded;
  encoded.reserve(pairs.size());
  for (const auto& p : pairs)
    encoded.emplace_back(checked_encoding(scorer, p.good, path, p.line), checked_encoding(scorer, p.bad, path, p.line));
  MinimalPairsScore out;
  for (size_t i = 0; i < pairs.size(); ++i) {
    MinimalPairsScore::Pair scored{pairs[i].line, scorer.score(encoded[i].first, variant).log_prob,
                                   scorer.score(encoded[i].second, variant).log_prob};
    out.correct += scored.correct();
    if (!pairs[i].phenomenon.empty()) {
      auto& count = out.phenomena[pairs[i].phenomenon];
      ++count.pairs;
      count.correct += scored.correct();
    }
    out.pairs.push_back(scored);
  }
  out.seconds = seconds_since(start);
  return out;
}

}  // namespace mlm::train::likelihood

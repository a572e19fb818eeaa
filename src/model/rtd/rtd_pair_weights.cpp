// The pair's weights in the Hugging Face format: the two networks' files (to_hf_pair,
// load_hf_pair) and model.pt's one dict of both (hf_state_dict); see rtd_pair.h.
#include <fmt/format.h>

#include <map>

#include "../hf/key_report.h"
#include "mlm/model/architecture_spec.h"
#include "mlm/model/rtd/rtd_pair.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace {

PickTensor detached_tensor() {
  return [](const torch::Tensor& p) { return p.detach(); };
}

torch::Tensor vocabulary_rows(const torch::Tensor& t, int64_t rows) { return t.defined() ? t.narrow(0, 0, rows) : t; }

// "electra.embeddings.word_embeddings.weight" -> "electra.embeddings.word_embeddings_delta".
std::string delta_key(const RtdGeneratorImpl& generator) {
  auto key = generator.word_embeddings_key();
  const std::string suffix = ".weight";
  if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0)
    key.resize(key.size() - suffix.size());
  return key + "_delta";
}

std::map<std::string, torch::Tensor> unique_keys(const TensorDict& state, const std::string& origin) {
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : state)
    if (!source.emplace(key, tensor).second) throw CheckpointError(origin + ": key " + key + " appears twice");
  return source;
}

std::string pair_shape(const RtdPairImpl& m, const std::string& what) {
  const auto& c = m.config();
  return fmt::format("the {} {} (vocab {}, hidden {}, layers {}, embedding {})", m.spec().display_name(), what,
                     m.vocab_size(), c.hidden_size, c.num_hidden_layers, config::electra_embedding_size(c));
}

// The discriminator's own tensors (its body and head, no tables) under its file's names.
TensorDict discriminator_own_views(RtdPairImpl& m, const PickTensor& pick) {
  auto out = m.discriminator->hf_views(pick);
  for (const auto& item : m.head->named_parameters())
    out.emplace_back(m.networks().head_name() + "." + item.key(), pick(item.value()));
  return out;
}

}  // namespace

TensorDict RtdPairImpl::pair_views(const TensorDict& generator_part, const PickTensor& pick) {
  TensorDict out;
  for (const auto& [key, t] : generator_part) out.emplace_back("generator." + key, t);
  if (gdes()) out.emplace_back("discriminator." + delta_key(*generator), vocabulary_rows(pick(word_embeddings_delta), vocab_size_));
  for (auto& [key, t] : discriminator_own_views(*this, pick)) out.emplace_back("discriminator." + key, t);
  return out;
}

TensorDict RtdPairImpl::hf_state_dict() { return pair_views(generator->hf_state_dict(), detached_tensor()); }

TensorDict RtdPairImpl::hf_gradients() {
  return pair_views(generator->hf_gradients(), [](const torch::Tensor& p) { return p.grad(); });
}

void RtdPairImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  const auto source = unique_keys(state, origin);
  const auto expected = hf_state_dict();
  const auto tied = [this](const std::string& key) {
    return key.rfind("generator.", 0) == 0 && generator->is_tied_decoder_key(key.substr(10));
  };
  const auto match = match_keys(expected, source, tied, [](const std::string&) { return false; });
  if (!match.ok())
    throw CheckpointError(origin + ": weights do not match " +
                          pair_shape(*this, "generator and discriminator (model.objective rtd)") + match.describe());
  torch::NoGradGuard no_grad;
  // Padded vocabulary rows are in no file: reset them to their initial zero.
  word_embeddings().zero_();
  generator->decoder_bias().zero_();
  if (gdes()) word_embeddings_delta.zero_();
  for (const auto& [key, target] : expected)
    if (!tied(key)) target.copy_(source.at(key));
}

RtdHfPair to_hf_pair(RtdPairImpl& m) {
  RtdHfPair pair;
  pair.generator = m.generator->hf_state_dict();
  // The discriminator's tables are the generator's (under gdes its token embeddings the sum).
  const auto words_key = m.generator->word_embeddings_key();
  for (const auto& [key, t] : pair.generator) {
    if (!m.generator->is_shared_key(key)) continue;
    const bool summed = key == words_key && m.gdes();
    pair.discriminator.emplace_back(key, summed ? t + vocabulary_rows(m.word_embeddings_delta.detach(), m.vocab_size()) : t);
  }
  for (auto& item : discriminator_own_views(m, detached_tensor())) pair.discriminator.push_back(std::move(item));
  return pair;
}

void load_hf_pair(RtdPairImpl& m, const RtdHfPair& pair, const std::string& generator_origin,
                  const std::string& discriminator_origin) {
  // The generator first, with its tables; then the discriminator's own tensors, and its tables
  // checked against the generator's (shared) or taken as generator + delta (gdes).
  m.generator->load_hf_state_dict(pair.generator, generator_origin);
  auto& generator = *m.generator;
  const auto source = unique_keys(pair.discriminator, discriminator_origin);
  const auto expected = to_hf_pair(m).discriminator;
  const auto buffer = [&generator](const std::string& key) { return generator.is_buffer_key(key); };
  const auto match = match_keys(expected, source, [](const std::string&) { return false; }, buffer);
  if (!match.ok())
    throw CheckpointError(discriminator_origin + ": weights do not match " + pair_shape(m, "discriminator") +
                          match.describe());
  const auto ours = unique_keys(expected, discriminator_origin);
  torch::NoGradGuard no_grad;
  for (const auto& [key, target] : discriminator_own_views(m, detached_tensor())) target.copy_(source.at(key));
  if (m.gdes()) m.word_embeddings_delta.zero_();  // its padded rows are in no file

  const auto words_key = generator.word_embeddings_key();
  std::vector<std::string> differing;
  for (const auto& [key, theirs] : source) {
    if (!generator.is_shared_key(key) || buffer(key)) continue;
    if (key == words_key && m.gdes()) {
      m.word_embeddings_delta.narrow(0, 0, m.vocab_size())
          .copy_(theirs.to(torch::kFloat32) - m.word_embeddings().narrow(0, 0, m.vocab_size()).cpu());
    } else if (!torch::equal(theirs.to(torch::kFloat32), ours.at(key).to(torch::kFloat32).cpu())) {
      differing.push_back(key);
    }
  }
  if (!differing.empty())
    throw CheckpointError(discriminator_origin + ": the discriminator's " + join_limited(differing) +
                          " differ from the generator's (" + generator_origin + "), which the pair shares" +
                          (m.gdes() ? "" : "; model.embedding_sharing: gdes keeps the token embeddings apart"));
}

}  // namespace mlm::model

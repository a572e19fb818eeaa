#include "mlm/model/deberta/deberta_rtd.h"

#include "mlm/model/bert/bert.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/electra/replaced_tokens.h"
#include "mlm/model/kernels/gumbel_max.h"

namespace mlm::model {

DebertaRtdHeadImpl::DebertaRtdHeadImpl(const config::ModelConfig& c) : act_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  layer_norm = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
  classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, 1));
}

torch::Tensor DebertaRtdHeadImpl::forward(const torch::Tensor& hidden) {
  // Every token's state is read next to the first token's (the sequence's context), normed.
  const auto states = layer_norm(hidden + hidden.select(1, 0).unsqueeze(1));
  return linear(classifier, activation(linear(dense, states), act_)).squeeze(-1);
}

DebertaV2ForPreTrainingImpl::DebertaV2ForPreTrainingImpl(const config::ModelConfig& c, int64_t vocab_size,
                                                         int64_t pad_id)
    : MaskedLmImpl(c, vocab_size, pad_id) {
  TORCH_CHECK(c.objective == config::Objective::rtd, "DebertaV2ForPreTraining trains objective rtd");
  // ELECTRA's generator config: the generator's shape and the embedding width E, objective mlm.
  generator = register_module("generator", DebertaV2ForMaskedLM(generator_config(c), vocab_size, pad_id));
  if (c.embedding_sharing == config::EmbeddingSharing::gdes) {
    word_embeddings_delta =
        register_parameter("word_embeddings_delta", torch::zeros({padded_vocab_, config::electra_embedding_size(c)}));
  }
  discriminator = register_module("discriminator", DebertaV2Model(c, padded_vocab_, pad_id, /*own_tables=*/false));
  mask_predictions = register_module("mask_predictions", DebertaRtdHead(c));
  init_weights();
}

void DebertaV2ForPreTrainingImpl::init_weights() {
  // One draw order for the whole pair: the generator's modules first, as modules() lists them.
  init_bert_modules(*this, config_.initializer_range);
  zero_unused_embedding_rows();
  torch::NoGradGuard no_grad;
  generator->predictions->bias.zero_();
  if (gdes()) word_embeddings_delta.zero_();  // DeBERTa-v3: the discriminator starts as the generator
}

torch::Tensor DebertaV2ForPreTrainingImpl::discriminator_embeddings(const MlmInputs& in, const torch::Tensor& ids) {
  namespace F = torch::nn::functional;
  auto& tables = *generator->deberta->embeddings;
  // (E_G)[i] + delta[i] = (sg(E_G) + delta)[i]: under gdes the generator's vectors carry no
  // gradient back from the discriminator (gradient-disentangled embedding sharing).
  const auto words = gdes() ? F::embedding(ids, word_embeddings().detach()) +
                                  F::embedding(ids, word_embeddings_delta, F::EmbeddingFuncOptions().padding_idx(pad_id_))
                            : tables.word_embeddings(ids);
  const auto mask = in.has_padding ? in.attention_mask : torch::Tensor();
  return discriminator->embeddings->normalize(tables.add_tables(words, in.token_type_ids), mask);
}

MlmOutput DebertaV2ForPreTrainingImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  const auto generator_logits = generator->selected_logits(in);
  MlmOutput out = generator->score_logits(generator_logits, in.masked_labels, return_logits);

  // The generator's samples replace the selected positions; no gradient flows through them.
  const auto samples = in.rtd_samples.defined()
                           ? in.rtd_samples
                           : kernels::gumbel_max_sample(generator_logits, vocab_size_, config_.rtd_temperature,
                                                        in.sample_seed);
  const auto corrupted = corrupt(in.input_ids, in.masked_positions, in.masked_labels, samples);

  const auto hidden =
      discriminator->encode(discriminator_embeddings(in, corrupted.input_ids), attention_bias_for(in, config_));
  const auto logits = mask_predictions(hidden).to(torch::kFloat32);
  const auto padding_mask = in.has_padding ? in.attention_mask : torch::Tensor();
  score_replaced(logits, corrupted, padding_mask, samples, in.masked_labels, out);
  if (return_logits) {
    out.rtd_logits = padding_mask.defined() ? logits.detach().masked_fill(padding_mask.eq(0), 0.0f) : logits.detach();
  }
  return out;
}

torch::Tensor DebertaV2ForPreTrainingImpl::last_hidden_states(const MlmInputs& in) {
  return discriminator->encode(discriminator_embeddings(in, in.input_ids), attention_bias_for(in, config_));
}

}  // namespace mlm::model

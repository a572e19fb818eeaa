#include "mlm/model/rtd/rtd_pair.h"

#include "mlm/model/architecture_spec.h"
#include "mlm/model/bert/bert.h"
#include "mlm/model/kernels/gumbel_max.h"
#include "mlm/model/rtd/replaced_tokens.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace {

const RtdNetworks& networks_of(const ArchitectureSpec& spec) {
  const auto* networks = spec.rtd_networks();
  if (!networks) throw ConfigError("model.objective rtd: " + spec.display_name() + " has no generator and discriminator pair");
  return *networks;
}

}  // namespace

config::ModelConfig generator_config(const config::ModelConfig& c) {
  const auto shape = config::generator_shape(c);
  auto g = c;
  g.hidden_size = shape.hidden_size;
  g.num_hidden_layers = shape.num_hidden_layers;
  g.num_attention_heads = shape.num_attention_heads;
  g.intermediate_size = shape.intermediate_size;
  g.embedding_size = config::electra_embedding_size(c);
  g.objective = config::Objective::mlm;
  return g;
}

RtdPairImpl::RtdPairImpl(const ArchitectureSpec& spec, const config::ModelConfig& c, int64_t vocab_size,
                         int64_t pad_id)
    : MaskedLmImpl(c, vocab_size, pad_id), spec_(spec), networks_(networks_of(spec)) {
  TORCH_CHECK(c.objective == config::Objective::rtd, "the replaced-token-detection pair trains objective rtd");
  generator = register_module("generator", networks_.generator(generator_config(c), vocab_size, pad_id));
  if (c.embedding_sharing == config::EmbeddingSharing::gdes) {
    word_embeddings_delta =
        register_parameter("word_embeddings_delta", torch::zeros({padded_vocab_, config::electra_embedding_size(c)}));
  }
  discriminator = register_module("discriminator", networks_.discriminator(c, padded_vocab_, pad_id));
  head = register_module(networks_.head_name(), networks_.head(c));
  init_weights();
}

void RtdPairImpl::init_weights() {
  // One draw order for the whole pair: the generator's modules first, as modules() lists them.
  init_bert_modules(*this, config_.initializer_range);
  zero_unused_embedding_rows();
  torch::NoGradGuard no_grad;
  generator->decoder_bias().zero_();
  if (gdes()) word_embeddings_delta.zero_();  // DeBERTa-v3: the discriminator starts as the generator
}

void RtdPairImpl::apply_phase_settings(const config::ModelConfig& phase) {
  MaskedLmImpl::apply_phase_settings(phase);
  generator->apply_phase_settings(phase);
  discriminator->set_checkpoint_layers(phase.activation_checkpointing);
}

torch::Tensor RtdPairImpl::discriminator_embeddings(const torch::Tensor& ids, const MlmInputs& in) {
  namespace F = torch::nn::functional;
  // (E_G)[i] + delta[i] = (sg(E_G) + delta)[i]: under gdes the generator's vectors carry no
  // gradient back from the discriminator (gradient-disentangled embedding sharing).
  const auto words = gdes() ? F::embedding(ids, word_embeddings().detach()) +
                                  F::embedding(ids, word_embeddings_delta, F::EmbeddingFuncOptions().padding_idx(pad_id_))
                            : generator->token_vectors(ids);
  return generator->add_shared_tables(words, in);
}

MlmOutput RtdPairImpl::forward(const MlmInputs& in, bool return_logits) {
  check_inputs(in);
  generator->taps = taps;  // distillation reads the generator's (ForwardTaps)
  const auto generator_logits = generator->selected_logits(in);
  generator->taps = nullptr;
  MlmOutput out = generator->score_logits(generator_logits, in.masked_labels, return_logits);

  // The generator's samples replace the selected positions; no gradient flows through them.
  const auto samples = in.rtd_samples.defined()
                           ? in.rtd_samples
                           : kernels::gumbel_max_sample(generator_logits, vocab_size_, config_.rtd_temperature,
                                                        in.sample_seed);
  const auto corrupted = corrupt(in.input_ids, in.masked_positions, in.masked_labels, samples);

  const auto hidden = discriminator->hidden_states(discriminator_embeddings(corrupted.input_ids, in), in,
                                            attention_bias_for(in, config_), token_layout_for(in, config_));
  const auto logits = head->forward(hidden).to(torch::kFloat32);
  const auto padding_mask = in.has_padding ? in.attention_mask : torch::Tensor();
  score_replaced(logits, corrupted, padding_mask, samples, in.masked_labels, out);
  if (return_logits) {
    // The padding's logits depend on whether the layers ran unpadded: 0 there, whatever ran.
    out.rtd_logits = padding_mask.defined() ? logits.detach().masked_fill(padding_mask.eq(0), 0.0f) : logits.detach();
  }
  return out;
}

torch::Tensor RtdPairImpl::last_hidden_states(const MlmInputs& in) {
  return discriminator->hidden_states(discriminator_embeddings(in.input_ids, in), in, attention_bias_for(in, config_),
                               token_layout_for(in, config_));
}

}  // namespace mlm::model

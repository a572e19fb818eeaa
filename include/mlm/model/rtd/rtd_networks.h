#pragma once
// What an architecture gives the replaced-token-detection pair (rtd/rtd_pair.h): its generator
// (a masked LM whose embedding tables the discriminator reads), its discriminator's body (the
// layers without tables) and its RTD head. The pair builds, samples, corrupts, scores and
// writes the rest the same way for every architecture; ArchitectureSpec::rtd_networks() hands
// these parts over (ELECTRA: electra/electra_rtd.cpp, DeBERTa-v3: deberta/deberta_rtd.cpp).
#include <torch/torch.h>

#include <memory>
#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"
#include "mlm/model/tensor_dict.h"
#include "mlm/model/token_layout.h"

namespace mlm::model {

/// The generator's config inside objective rtd: `config` with the generator's shape
/// (config::generator_shape), the pair's embedding width E, objective mlm.
config::ModelConfig generator_config(const config::ModelConfig& config);

/// The generator: an architecture's masked LM (objective mlm) whose word, position and
/// token-type tables are the discriminator's too.
class RtdGeneratorImpl : public MaskedLmImpl {
 public:
  /// The logits [M, padded_vocab] of the selected positions of `inputs`.
  virtual torch::Tensor selected_logits(const MlmInputs& inputs) = 0;
  /// The rows of the word embeddings for `ids` [B,S], through the table's own lookup.
  virtual torch::Tensor token_vectors(const torch::Tensor& ids) = 0;
  /// The discriminator's input from its token vectors `words` [B,S,E]: the shared position and
  /// token-type rows added (ELECTRA: the embeddings' norm and dropout too, which it shares).
  virtual torch::Tensor add_shared_tables(const torch::Tensor& words, const MlmInputs& inputs) = 0;
  /// The decoder's bias [padded_vocab] (zero at initialisation).
  virtual torch::Tensor decoder_bias() const = 0;

  // ---- the generator's keys in its Hugging Face state dict -----------------------------------
  /// The token embeddings' key ("electra.embeddings.word_embeddings.weight").
  virtual std::string word_embeddings_key() const = 0;
  /// A key of a tensor the discriminator shares (its file holds the same tensor).
  virtual bool is_shared_key(const std::string& key) const = 0;
  /// A key that repeats the tied decoder (the word embeddings' own tensor).
  virtual bool is_tied_decoder_key(const std::string& key) const = 0;
  /// A buffer transformers saves in a file, no weight (read nowhere).
  virtual bool is_buffer_key(const std::string& key) const { return false; }

  /// score() for the pair, which scores the generator's logits itself.
  MlmOutput score_logits(const torch::Tensor& logits, const torch::Tensor& labels, bool return_logits) const {
    return score(logits, labels, return_logits);
  }

 protected:
  using MaskedLmImpl::MaskedLmImpl;
};

/// The discriminator's body: its layers (and what each network keeps of its own embeddings).
class RtdDiscriminatorImpl : public torch::nn::Module {
 public:
  /// The last hidden states [B,S,H] of `embedded` [B,S,E] (the generator's add_shared_tables).
  virtual torch::Tensor hidden_states(const torch::Tensor& embedded, const MlmInputs& inputs,
                               const torch::Tensor& attention_bias, const TokenLayout& layout) = 0;
  /// model.activation_checkpointing for its layers.
  virtual void set_checkpoint_layers(bool on) = 0;
  /// Its tensors (`pick` of each parameter) under the key names of the discriminator's Hugging
  /// Face file, without the shared tables.
  virtual TensorDict hf_views(const PickTensor& pick) = 0;
};

/// The RTD head: the discriminator's last hidden states [B,S,H] to one logit per token [B,S]
/// (replaced when > 0). Its parameters' names under the head's module name are its file keys.
class RtdHeadImpl : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& hidden) = 0;
};

/// One architecture's part of the pair.
class RtdNetworks {
 public:
  virtual ~RtdNetworks() = default;
  /// The generator of `generator_config` (generator_config() of the pair's).
  virtual std::shared_ptr<RtdGeneratorImpl> generator(const config::ModelConfig& generator_config,
                                                      int64_t vocab_size, int64_t pad_id) const = 0;
  /// The discriminator's body of `config` (the pair's own).
  virtual std::shared_ptr<RtdDiscriminatorImpl> discriminator(const config::ModelConfig& config,
                                                              int64_t padded_vocab, int64_t pad_id) const = 0;
  virtual std::shared_ptr<RtdHeadImpl> head(const config::ModelConfig& config) const = 0;
  /// The head's module name, the prefix of its keys ("discriminator_predictions").
  virtual std::string head_name() const = 0;
  /// config.json's "architectures" of the exported discriminator ("ElectraForPreTraining").
  virtual std::string discriminator_class() const = 0;
};

}  // namespace mlm::model

#pragma once
// BERT for pretraining: encoder + weight-tied MLM head (+ pooler and NSP/SOP head when the
// objective asks for them), the loss on selected positions only, and the Hugging Face weight
// format (exact `transformers` key names, vocabulary unpadded).
//
// Module tree (named_parameters()):
//   bert.embeddings.{word_embeddings,position_embeddings,token_type_embeddings}.weight,
//   bert.embeddings.LayerNorm.*, bert.encoder.layer.N.attention.self.qkv.* (fused q/k/v),
//   bert.encoder.layer.N.{attention.output.dense,attention.output.LayerNorm,
//   intermediate.dense,output.dense,output.LayerNorm}.*, bert.encoder.final_layer_norm.*
//   (pre-LN only), bert.pooler.dense.* (nsp/sop), cls.predictions.transform.{dense,LayerNorm}.*,
//   cls.predictions.bias, cls.seq_relationship.* (nsp/sop).
// word_embeddings.weight and cls.predictions.bias have padded_vocab_size() rows; the padded
// rows start at zero, get no gradient and never reach the loss or the HF format.
//
// RoBERTa and XLM-R (model.architecture roberta, xlm_roberta) are this class too: the same
// layers and head, with RoBERTa's position ids (embeddings.h), the head's activation always
// exact GELU (RobertaLMHead's), no NSP head, and transformers' RobertaForMaskedLM key names in
// the HF format (BertHfNames): roberta.embeddings.*, roberta.encoder.layer.N.*,
// lm_head.{dense,layer_norm,decoder,bias}. The module tree keeps BERT's names.
#include <torch/torch.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mlm/config/sections/model.h"
#include "mlm/model/bert/embeddings.h"
#include "mlm/model/bert/encoder_layer.h"
#include "mlm/model/bert/mlm_head.h"
#include "mlm/model/layers.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// The encoder ("bert"): embeddings, N layers, final LayerNorm for pre-LN, optional pooler.
struct BertModelImpl : torch::nn::Module {
  BertModelImpl(const config::ModelConfig& config, int64_t padded_vocab, int64_t pad_id,
                bool with_pooler);

  /// Returns the last hidden states [B,S,H] (fp32). attention_bias: see BertLayerImpl;
  /// `layout`: the layers run on the real tokens only when it is unpadded (TokenLayout::of).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& attention_bias, const TokenLayout& layout = {});
  /// The last hidden states at `positions` only ([B,R] indices into S per row): [B,R,H], equal
  /// to forward() gathered there, with the last layer's query, output projection and
  /// feed-forward block run on those positions only (BertLayerImpl::forward_at).
  torch::Tensor forward_at(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                           const torch::Tensor& attention_bias, const torch::Tensor& positions,
                           const TokenLayout& layout = {});
  /// tanh(dense(hidden[:, 0])): [B,H]. Only with a pooler.
  torch::Tensor pool(const torch::Tensor& hidden);

  BertEmbeddings embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};        // "encoder.layer"
  LayerNorm final_layer_norm{nullptr};          // "encoder.final_layer_norm", pre-LN only
  torch::nn::Linear pooler_dense{nullptr};      // "pooler.dense", nsp/sop only
  bool checkpoint_layers = false;               // model.activation_checkpointing
  ForwardTaps* taps = nullptr;                  // the MaskedLm's, during its forward
};
TORCH_MODULE(BertModel);

class BertForPreTrainingImpl : public MaskedLmImpl {
 public:
  /// Weights are initialised as BERT: normal(0, initializer_range) for linear and embedding
  /// weights, zero biases, LayerNorm 1 / 0; the [PAD] and padded rows start at zero.
  BertForPreTrainingImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) override;
  torch::Tensor last_hidden_states(const MlmInputs& inputs) override;
  void init_weights() override;
  torch::Tensor word_embeddings() const override { return bert->embeddings->word_embeddings->weight; }
  TensorDict hf_state_dict() override;
  TensorDict hf_gradients() override;
  void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) override;
  void apply_phase_settings(const config::ModelConfig& phase) override {
    MaskedLmImpl::apply_phase_settings(phase);
    bert->checkpoint_layers = phase.activation_checkpointing;
  }
  bool has_nsp_head() const override { return !seq_relationship.is_empty(); }

  BertModel bert{nullptr};
  MlmHead predictions{nullptr};                 // "cls.predictions"
  torch::nn::Linear seq_relationship{nullptr};  // "cls.seq_relationship", nsp/sop only
};
TORCH_MODULE(BertForPreTraining);

/// BERT's initialisation of every Linear, Embedding and LayerNorm under `module`:
/// normal(0, std) weights, zero biases, LayerNorm weight 1 and bias 0.
void init_bert_modules(torch::nn::Module& module, double std);

// ---- Hugging Face weight format (bert_weights.cpp) -------------------------------------------

/// Where BertForPreTraining's parts sit among transformers' key names: BertForPreTraining /
/// BertForMaskedLM's, or RobertaForMaskedLM's (XLMRobertaForMaskedLM's alike).
struct BertHfNames {
  std::string encoder;     // "bert." | "roberta."
  std::string head;        // the MLM head's prefix: "cls.predictions." | "lm_head."
  std::string head_dense;  // "cls.predictions.transform.dense" | "lm_head.dense"
  std::string head_norm;   // "cls.predictions.transform.LayerNorm" | "lm_head.layer_norm"
  static BertHfNames of(config::Architecture architecture);
};

/// Appends the HF keys of one BERT layer under `prefix` (e.g. "bert.encoder.layer.3."), query,
/// key and value split from the fused matrix; shared by every model built of BertLayers.
void add_hf_layer_views(TensorDict& out, const std::string& prefix, BertLayerImpl& layer, const PickTensor& pick);
/// Appends the HF keys of the embeddings under `prefix` (e.g. "bert.embeddings."), the word
/// embeddings given as `words` (unpadded; the caller's pick, or a sum).
void add_hf_embedding_views(TensorDict& out, const std::string& prefix, BertEmbeddingsImpl& embeddings,
                            const torch::Tensor& words, const PickTensor& pick);

/// HF-format state dict: exact `transformers` BertForPreTraining / BertForMaskedLM key names
/// (RoBERTa: RobertaForMaskedLM's, lm_head.decoder.* the tied copies),
/// vocabulary unpadded, q/k/v split. cls.predictions.decoder.weight is the same tensor as
/// bert.embeddings.word_embeddings.weight and cls.predictions.decoder.bias the same as
/// cls.predictions.bias. Pre-LN adds bert.encoder.final_layer_norm.{weight,bias}, which HF
/// BERT does not know.
TensorDict to_hf_state_dict(BertForPreTrainingImpl& model);
TensorDict to_hf_gradients(BertForPreTrainingImpl& model);

/// load_hf_state_dict for BERT also accepts a bare BertModel (no "bert." prefix; the MLM head
/// then keeps its initialisation, with a warning), TF-era LayerNorm.gamma/beta names, and a
/// missing or unused pooler / NSP head when the model has none. RoBERTa's alike under its
/// names (a bare RobertaModel, a hub checkpoint's roberta.pooler.*, ignored).
void load_hf_state_dict(BertForPreTrainingImpl& model, const TensorDict& state,
                        const std::string& origin_for_errors);

// The same through the module holder.
inline TensorDict to_hf_state_dict(BertForPreTraining& model) { return to_hf_state_dict(*model); }
inline TensorDict to_hf_gradients(BertForPreTraining& model) { return to_hf_gradients(*model); }
inline void load_hf_state_dict(BertForPreTraining& model, const TensorDict& state, const std::string& origin) {
  load_hf_state_dict(*model, state, origin);
}

}  // namespace mlm::model

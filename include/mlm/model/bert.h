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
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/model/embeddings.h"
#include "mlm/model/encoder_layer.h"
#include "mlm/model/layers.h"
#include "mlm/model/mlm_head.h"
#include "mlm/model/tensor_file.h"

namespace mlm::model {

struct BertInputs {              // tensors on the model's device
  torch::Tensor input_ids;       // [B,S] int64
  torch::Tensor token_type_ids;  // [B,S] int64 (undefined = all 0)
  torch::Tensor attention_mask;  // [B,S] int64 (1 = token); pass an undefined tensor or set
  bool has_padding = true;       //   has_padding=false to skip the mask entirely
  torch::Tensor masked_positions;  // [M] int64 flat indices b*S+s (ascending)
  torch::Tensor masked_labels;     // [M] int64 original ids at those positions
  torch::Tensor nsp_labels;        // [B] int64, undefined unless objective nsp/sop
  torch::Tensor document_ids;      // [B,S] int64 >= 0, equal = same document of the row
                                   //   (padding 0); read only under model.attend_across_
                                   //   documents false (undefined = each row one document)
};

/// The additive attention bias forward() gives every layer for `inputs`: undefined without
/// padding; [B,1,1,S] for padded keys; [B,1,S,S] when config.attend_across_documents is false
/// and document ids are given, 0 where query and key are in the same document (padding
/// apart), in the dtype the attention runs in (compute_dtype).
torch::Tensor attention_bias_for(const BertInputs& inputs, const config::ModelConfig& config);

struct BertOutput {
  torch::Tensor mlm_loss_sum;  // scalar fp32: sum of cross-entropy over selected positions
  torch::Tensor mlm_correct;   // scalar int64: argmax == label over selected positions
  torch::Tensor nsp_loss_sum, nsp_correct;  // defined only with nsp/sop and nsp_labels
  torch::Tensor mlm_logits;    // [M, vocab] fp32 (unpadded vocab), only when requested
};

/// The encoder ("bert"): embeddings, N layers, final LayerNorm for pre-LN, optional pooler.
struct BertModelImpl : torch::nn::Module {
  BertModelImpl(const config::ModelConfig& config, int64_t padded_vocab, int64_t pad_id,
                bool with_pooler);

  /// Returns the last hidden states [B,S,H] (fp32). attention_bias: see BertLayerImpl.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& attention_bias);
  /// The last hidden states at `positions` only ([B,R] indices into S per row): [B,R,H], equal
  /// to forward() gathered there, with the last layer's query, output projection and
  /// feed-forward block run on those positions only (BertLayerImpl::forward_at).
  torch::Tensor forward_at(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                           const torch::Tensor& attention_bias, const torch::Tensor& positions);
  /// tanh(dense(hidden[:, 0])): [B,H]. Only with a pooler.
  torch::Tensor pool(const torch::Tensor& hidden);

  BertEmbeddings embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};        // "encoder.layer"
  LayerNorm final_layer_norm{nullptr};          // "encoder.final_layer_norm", pre-LN only
  torch::nn::Linear pooler_dense{nullptr};      // "pooler.dense", nsp/sop only
};
TORCH_MODULE(BertModel);

/// Flat selected positions (b*S+s, ascending) as per-row positions for forward_at: `positions`
/// [B,R] (R = the most any row has; shorter rows padded with position 0) and `rows` [M], the
/// index of each selected position in the flattened [B*R] result.
struct SelectedPositions {
  torch::Tensor positions, rows;
  static SelectedPositions from_flat(const torch::Tensor& flat, int64_t batch, int64_t seq);
};

class BertForPreTrainingImpl : public torch::nn::Module {
 public:
  /// vocab_size: the tokenizer's real vocabulary (the logits have this many columns);
  /// pad_id: the [PAD] id (its embedding row starts at zero and gets no lookup gradient).
  /// Weights are initialised as BERT: normal(0, initializer_range) for linear and embedding
  /// weights, zero biases, LayerNorm 1 / 0. Seed with torch::manual_seed first.
  BertForPreTrainingImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  /// Loss sums (not means) over the selected positions: the trainer divides by the global
  /// selected count. Zero selected positions give a zero loss with zero gradient.
  BertOutput forward(const BertInputs& inputs, bool return_logits = false);

  int64_t vocab_size() const { return vocab_size_; }          // unpadded
  int64_t padded_vocab_size() const { return padded_vocab_; }
  int64_t pad_id() const { return pad_id_; }
  bool has_nsp_head() const { return !seq_relationship.is_empty(); }
  const config::ModelConfig& config() const { return config_; }

  /// Re-draws every weight as at construction (BERT initialisation).
  void init_weights();

  /// The tied matrix: word embeddings = MLM decoder weight [padded_vocab, H].
  torch::Tensor word_embeddings() const { return bert->embeddings->word_embeddings->weight; }

  BertModel bert{nullptr};
  MlmHead predictions{nullptr};                 // "cls.predictions"
  torch::nn::Linear seq_relationship{nullptr};  // "cls.seq_relationship", nsp/sop only

 private:
  config::ModelConfig config_;
  int64_t vocab_size_, padded_vocab_, pad_id_;
};
TORCH_MODULE(BertForPreTraining);

/// Number of distinct parameter tensors' elements (each shared tensor counted once).
int64_t count_parameters(torch::nn::Module& module);

// ---- Hugging Face weight format (hf_weights.cpp) ---------------------------------------------

/// HF-format state dict: exact `transformers` BertForPreTraining / BertForMaskedLM key names,
/// vocabulary unpadded, q/k/v split. The tensors are detached *views* of the parameters
/// (copy before modifying). cls.predictions.decoder.weight is the same tensor as
/// bert.embeddings.word_embeddings.weight and cls.predictions.decoder.bias the same as
/// cls.predictions.bias. Pre-LN adds bert.encoder.final_layer_norm.{weight,bias}, which HF
/// BERT does not know.
TensorDict to_hf_state_dict(BertForPreTraining& model);

/// The gradients in the same layout (undefined where a parameter has none): for tests and
/// debugging against a Python reference.
TensorDict to_hf_gradients(BertForPreTraining& model);

/// Copies an HF-format state dict into the model. Accepts a bare BertModel (no "bert." prefix;
/// the MLM head then keeps its initialisation, with a warning), TF-era LayerNorm.gamma/beta
/// names, and a missing or unused pooler / NSP head when the model has none. Missing keys,
/// unexpected keys and shape mismatches are one CheckpointError naming `origin_for_errors`
/// and listing each with its shape. Padded vocabulary rows are reset to zero.
void load_hf_state_dict(BertForPreTraining& model, const TensorDict& state,
                        const std::string& origin_for_errors);

/// model.pt: the HF-format dict written with torch::pickle_save (torch.load-able).
void save_model_pt(BertForPreTraining& model, const std::string& path);
/// Reads a model.pt (or any HF-format weight file); CheckpointError naming the file.
void load_model_pt(BertForPreTraining& model, const std::string& path);

}  // namespace mlm::model

#pragma once
// The model mlm-train trains, whatever its architecture: an encoder and a masked-LM head whose
// decoder is tied to the token embeddings (BERT may add an NSP/SOP head). The trainer, the
// evaluator, checkpoints and the tools hold a MaskedLm; model.architecture's spec builds the
// implementation (architecture_spec.h, make_masked_lm.h). Each names its parameters as
// `transformers` does, so the Hugging Face weight format is its state dict with the
// vocabulary unpadded.
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "mlm/config/sections/model.h"
#include "mlm/model/tensor_dict.h"
#include "mlm/model/token_layout.h"

namespace mlm::model {

struct MlmInputs {               // tensors on the model's device
  torch::Tensor input_ids;       // [B,S] int64
  torch::Tensor token_type_ids;  // [B,S] int64 (undefined = all 0; BERT only)
  torch::Tensor attention_mask;  // [B,S] int64 (1 = token); pass an undefined tensor or set
  bool has_padding = true;       //   has_padding=false to skip the mask entirely
  torch::Tensor masked_positions;  // [M] int64 flat indices b*S+s (ascending)
  torch::Tensor masked_labels;     // [M] int64 original ids at those positions
  torch::Tensor nsp_labels;        // [B] int64, undefined unless objective nsp/sop
  torch::Tensor document_ids;      // [B,S] int64 >= 0, equal = same document of the row
                                   //   (padding 0); read only under model.attend_across_
                                   //   documents false (undefined = each row one document)
  torch::Tensor rtd_samples;       // [M] int64: rtd only, the generator's samples at the
                                   //   masked positions (tests); undefined = Gumbel-max draws
  std::optional<uint64_t> sample_seed;  // rtd: the draws' seed (evaluation); none = the
                                        //   default generator's next (training)
  // What the host counted in the batch before uploading it (to_bert_inputs), so that the
  // model sizes its gathers without reading the device; -1 / unknown: read there.
  LayoutCounts layout_counts;           // real tokens, document runs (TokenLayout::of)
  int64_t max_selected_in_row = -1;     // the most masked_positions any row has
};

struct MlmOutput {
  torch::Tensor mlm_loss_sum;  // scalar fp32: sum of cross-entropy over selected positions
  torch::Tensor mlm_correct;   // scalar int64: argmax == label over selected positions
  torch::Tensor nsp_loss_sum, nsp_correct;  // defined only with nsp/sop and nsp_labels
  torch::Tensor mlm_logits;    // [M, vocab] fp32 (unpadded vocab), only when requested

  // Replaced-token detection (rtd only; the mlm_* above are then the generator's). Over the
  // non-padding tokens: the binary cross-entropy sum, the tokens called right, the replaced
  // tokens called replaced (true positives), the tokens called replaced, the tokens replaced;
  // over the selected positions: the generator's samples that equal the original token.
  torch::Tensor rtd_loss_sum, rtd_correct, rtd_true_positives, rtd_predicted, rtd_replaced,
      generator_hits;
  torch::Tensor rtd_logits;    // [B,S] fp32 (0 at the padding), only when requested
};

/// What distillation (train/distill/) reads from inside one forward pass. Set
/// MaskedLmImpl::taps before forward(); an architecture whose spec says fills_forward_taps()
/// fills what is asked (the others ignore it).
struct ForwardTaps {
  bool last_hidden = false;  // keep the encoder's output: the forward then runs its last layer
                             //   on every position (no sparse head)
  int64_t qkv_layer = -1;    // the layer whose attention projections to keep (-1: none)
  torch::Tensor hidden;      // [B,S,H] the encoder's output (padding rows included)
  torch::Tensor qkv;         // [B,S,3H] queries | keys | values of qkv_layer's (normed) input,
                             //   before any rotary embedding
};

class RtdPairImpl;  // rtd/rtd_pair.h

class MaskedLmImpl : public torch::nn::Module {
 public:
  /// Loss sums (not means) over the selected positions: the trainer divides by the global
  /// selected count. Zero selected positions give a zero loss with zero gradient.
  virtual MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) = 0;

  /// The encoder's output [B,S,H] for `inputs` (input ids, token types, padding and documents;
  /// the masked positions are not read): what a classifier fine-tuned on the encoder reads.
  /// ELECTRA's pair gives its discriminator's, on the ids as they are.
  virtual torch::Tensor last_hidden_states(const MlmInputs& inputs) = 0;

  /// Re-draws every weight as the architecture's reference initialises it.
  virtual void init_weights() = 0;

  /// The tied matrix: token embeddings = MLM decoder weight [padded_vocab, H].
  virtual torch::Tensor word_embeddings() const = 0;

  /// The state dict in the Hugging Face format: `transformers`' key names for the
  /// architecture, vocabulary unpadded, detached *views* of the parameters (copy before
  /// modifying); the tied decoder weight is the same tensor as the token embeddings.
  virtual TensorDict hf_state_dict() = 0;
  /// The gradients in the same layout (undefined where a parameter has none): for tests and
  /// debugging against a Python reference.
  virtual TensorDict hf_gradients() = 0;
  /// Copies an HF-format state dict in. Missing keys, unexpected keys and shape mismatches
  /// are one CheckpointError naming `origin_for_errors`; padded vocabulary rows are reset to 0.
  virtual void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) = 0;

  /// The model settings a phase of a run may change (config/phases.h): activation
  /// checkpointing, and a rotary architecture's RoPE bases (context extension).
  virtual void apply_phase_settings(const config::ModelConfig& phase) {
    config_.activation_checkpointing = phase.activation_checkpointing;
  }

  virtual bool has_nsp_head() const { return false; }
  /// A generator and a discriminator (objective rtd): forward() fills the rtd_* outputs.
  virtual bool has_rtd() const { return false; }
  /// The replaced-token-detection pair this is (rtd/rtd_pair.h), or nullptr for one network.
  virtual RtdPairImpl* rtd_pair() { return nullptr; }

  int64_t vocab_size() const { return vocab_size_; }          // unpadded
  int64_t padded_vocab_size() const { return padded_vocab_; }
  int64_t pad_id() const { return pad_id_; }
  /// The longest sequence the position table holds (config::max_sequence_length).
  int64_t max_sequence_length() const { return config::max_sequence_length(config_, pad_id_); }
  const config::ModelConfig& config() const { return config_; }

  /// Distillation's taps for the next forward() (not owned; nullptr: none).
  ForwardTaps* taps = nullptr;

 protected:
  /// vocab_size: the tokenizer's real vocabulary (the logits have this many columns), padded
  /// to model.pad_vocab_multiple rows; pad_id: the [PAD] id (no lookup gradient).
  MaskedLmImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  /// What every forward needs: input_ids [B,S], masked positions and labels of one length.
  static void check_inputs(const MlmInputs& inputs);

  /// Zeroes the word embeddings' [PAD] row (no lookup gradient, as nn.Embedding(padding_idx))
  /// and the padded rows (never predicted): how every initialisation leaves them.
  void zero_unused_embedding_rows();

  /// Cross-entropy sum and correct count of `logits` [M, padded_vocab] against `labels`, the
  /// padded columns sliced off first (they can never be predicted or counted).
  MlmOutput score(const torch::Tensor& logits, const torch::Tensor& labels, bool return_logits) const;

  config::ModelConfig config_;
  int64_t vocab_size_, padded_vocab_, pad_id_;
};

/// A shared handle on a MaskedLmImpl, made from either architecture's module holder.
class MaskedLm : public torch::nn::ModuleHolder<MaskedLmImpl> {
 public:
  MaskedLm(std::nullptr_t) : ModuleHolder(nullptr) {}
  MaskedLm(std::shared_ptr<MaskedLmImpl> impl) : ModuleHolder(std::shared_ptr<MaskedLmImpl>(std::move(impl))) {}
  template <class T, class = std::enable_if_t<std::is_base_of_v<MaskedLmImpl, T>>>
  MaskedLm(const torch::nn::ModuleHolder<T>& model) : ModuleHolder(std::shared_ptr<MaskedLmImpl>(model.ptr())) {}
};

/// The additive attention bias for `inputs` on global attention: undefined without padding;
/// [B,1,1,S] for padded keys; [B,1,S,S] when config.attend_across_documents is false and
/// document ids are given, 0 where query and key are in the same document (padding apart), in
/// the dtype the attention runs in (compute_dtype).
torch::Tensor attention_bias_for(const MlmInputs& inputs, const config::ModelConfig& config);

/// Flat selected positions (b*S+s, ascending) as per-row positions for forward_at: `positions`
/// [B,R] (R = the most any row has; shorter rows padded with position 0) and `rows` [M], the
/// index of each selected position in the flattened [B*R] result.
struct SelectedPositions {
  torch::Tensor positions, rows;
  /// `known_width`: R when the caller knows it (MlmInputs::max_selected_in_row), else read from the
  /// device.
  static SelectedPositions from_flat(const torch::Tensor& flat, int64_t batch, int64_t seq, int64_t known_width = -1);
};

/// The rows the layers of `inputs` run on (TokenLayout::of): its real tokens when unpadding
/// pays, in segments of its documents when config.attend_across_documents is false, sized by
/// inputs.layout_counts.
TokenLayout token_layout_for(const MlmInputs& inputs, const config::ModelConfig& config);

/// Number of distinct parameter tensors' elements (each shared tensor counted once).
int64_t count_parameters(torch::nn::Module& module);

/// model.pt: the HF-format dict written with torch::pickle_save (torch.load-able).
void save_model_pt(MaskedLm model, const std::string& path);
/// Reads a model.pt (or any HF-format weight file); CheckpointError naming the file.
void load_model_pt(MaskedLm model, const std::string& path);

}  // namespace mlm::model

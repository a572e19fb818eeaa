#pragma once
// DeBERTa-v2/v3 (model.architecture deberta_v2) for masked-language-model pretraining, as
// `transformers`' DebertaV2ForMaskedLM computes it: word embeddings (E wide; an absolute
// position table only with position_biased_input, a token-type table only with
// type_vocab_size > 0), embed_proj E -> H when E differs, LayerNorm, the padding zeroed; post-LN
// layers of disentangled self-attention (content-to-content plus, from pos_att_type, c2p and
// p2c against the relative-position embeddings, every term scaled by sqrt(d x (1 + terms)));
// relative positions bucketed logarithmically beyond position_buckets / 2; the MLM head
// (transformers' legacy one, its default: dense H -> E, activation, LayerNorm, decoder tied to
// the word embeddings + bias).
//
// Module tree (named_parameters() are transformers' names):
//   deberta.embeddings.{word_embeddings,position_embeddings,token_type_embeddings}.weight,
//   deberta.embeddings.embed_proj.weight, deberta.embeddings.LayerNorm.*,
//   deberta.encoder.layer.N.attention.self.{query_proj,key_proj,value_proj,pos_key_proj,
//   pos_query_proj}.*, deberta.encoder.layer.N.attention.output.{dense,LayerNorm}.*,
//   deberta.encoder.layer.N.{intermediate.dense,output.dense,output.LayerNorm}.*,
//   deberta.encoder.rel_embeddings.weight, deberta.encoder.LayerNorm.* (norm_rel_ebd),
//   cls.predictions.transform.{dense,LayerNorm}.*, cls.predictions.bias.
// word_embeddings and cls.predictions.bias have padded_vocab_size() rows; the padded rows
// start at zero, get no gradient and never reach the loss or the HF format.
// The layers run on the padded batch (no unpadded rows: every query needs its key positions).
// The relative terms are computed against the relative rows the sequence can read (at S <=
// position_buckets / 2 the 2S - 1 rows around the middle, not all 2 x position_buckets) and
// folded into the softmax by kernels::relative_softmax_dropout (docs/DEBERTA.md, "Speed").
#include <torch/torch.h>

#include "mlm/model/bert/mlm_head.h"
#include "mlm/model/layers.h"
#include "mlm/model/masked_lm.h"
#include "mlm/model/rtd/rtd_networks.h"

namespace mlm::model {

/// transformers' build_relative_position for S queries and keys: [S,S] int64, query - key,
/// log-bucketed (make_log_bucket_position) when buckets > 0 and max_position > 0.
torch::Tensor deberta_relative_positions(int64_t seq, int64_t buckets, int64_t max_position,
                                         const torch::Device& device);

/// The relative-embedding rows S queries and keys read, and which one each pair reads:
/// transformers' c2p_pos = clamp(relative_pos + span, 0, 2 span - 1) (p2c_pos is its transpose,
/// the bucketing being odd) is `first` + index[i,j].
struct RelativeWindow {
  torch::Tensor index;  // [S,S] int32, on the device
  int64_t first = 0, width = 0;
};
RelativeWindow deberta_relative_window(int64_t seq, int64_t buckets, int64_t max_position, int64_t span,
                                       const torch::Device& device);

struct DebertaV2EmbeddingsImpl : torch::nn::Module {
  /// `own_tables` false: no word, position or token-type table (a discriminator reads its
  /// generator's), only embed_proj and the LayerNorm.
  DebertaV2EmbeddingsImpl(const config::ModelConfig& config, int64_t padded_vocab, int64_t pad_id,
                          bool own_tables = true);
  /// [B,S,H]; token_type_ids undefined = all 0; attention_mask undefined = no padding.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& attention_mask);
  /// The token vectors `words` [B,S,E] plus this module's position and token-type rows.
  torch::Tensor add_tables(const torch::Tensor& words, const torch::Tensor& token_type_ids);
  /// [B,S,E] -> [B,S,H]: embed_proj, LayerNorm, the padding zeroed, dropout.
  torch::Tensor normalize(const torch::Tensor& embedded, const torch::Tensor& attention_mask);

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr}, token_type_embeddings{nullptr};
  torch::nn::Linear embed_proj{nullptr};  // E != H only, no bias
  LayerNorm layer_norm{nullptr};          // "LayerNorm"
  double dropout_;
};
TORCH_MODULE(DebertaV2Embeddings);

/// One DeBERTa layer: disentangled self-attention (attention.self), its output dense + residual
/// LayerNorm (attention.output), the feed-forward block (intermediate, output).
struct DebertaV2LayerImpl : torch::nn::Module {
  explicit DebertaV2LayerImpl(const config::ModelConfig& config);
  /// x [B,S,H]; bias: attention_bias_for's (undefined: no padding); rel_rows: the window's rows
  /// of the relative embeddings [W,H] (normed; undefined without relative_attention);
  /// rel_index: the window's index [S,S] int32.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias, const torch::Tensor& rel_rows,
                        const torch::Tensor& rel_index);
  /// attention.self: the context [B,S,H] before attention.output.dense (arguments as forward's).
  torch::Tensor self_attention(const torch::Tensor& x, const torch::Tensor& bias, const torch::Tensor& rel_rows,
                               const torch::Tensor& rel_index);

  torch::nn::Linear query_proj{nullptr}, key_proj{nullptr}, value_proj{nullptr}, pos_key_proj{nullptr},
      pos_query_proj{nullptr}, attention_dense{nullptr}, intermediate_dense{nullptr}, output_dense{nullptr};
  LayerNorm attention_norm{nullptr}, output_norm{nullptr};
  /// The scores, softmax and dropout by kernels::relative_softmax_dropout (true) or by the ATen
  /// composition it replaces (false: mlm-bench --attention times both).
  bool fused_scores = true;

 private:
  int64_t heads_;
  bool c2p_, p2c_, share_att_key_, relative_attention_;
  double scale_factor_;
  config::Activation act_;
  double hidden_dropout_, attention_dropout_;
};
TORCH_MODULE(DebertaV2Layer);

/// The encoder ("deberta"): embeddings, layers, the relative-position embeddings and their norm;
/// without tables, the RTD pair's discriminator (deberta_rtd.h).
struct DebertaV2ModelImpl : RtdDiscriminatorImpl {
  /// `own_tables`: as DebertaV2EmbeddingsImpl's.
  DebertaV2ModelImpl(const config::ModelConfig& config, int64_t padded_vocab, int64_t pad_id,
                     bool own_tables = true);
  /// The last hidden states [B,S,H] (fp32); attention_mask undefined = no padding, bias as
  /// DebertaV2LayerImpl::forward takes it.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids,
                        const torch::Tensor& attention_mask, const torch::Tensor& bias);
  /// The layers on embeddings already made ([B,S,H], embeddings->normalize's).
  torch::Tensor encode(const torch::Tensor& embedded, const torch::Tensor& bias);
  /// The relative rows (normed) and window the layers read at `seq` positions (undefined rows
  /// without relative_attention).
  std::pair<torch::Tensor, RelativeWindow> relative_rows(int64_t seq, const torch::Device& device);

  // As the pair's discriminator: its own embed_proj and LayerNorm on the generator's tables,
  // then the layers (padded: DeBERTa's layers run on the padded batch).
  torch::Tensor hidden_states(const torch::Tensor& embedded, const MlmInputs& inputs,
                              const torch::Tensor& attention_bias, const TokenLayout& layout) override;
  void set_checkpoint_layers(bool on) override { checkpoint_layers = on; }
  /// deberta.<parameter name> of each parameter.
  TensorDict hf_views(const PickTensor& pick) override;

  DebertaV2Embeddings embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};          // "encoder.layer"
  torch::nn::Embedding rel_embeddings{nullptr};   // "encoder.rel_embeddings", relative_attention
  LayerNorm rel_norm{nullptr};                    // "encoder.LayerNorm", norm_rel_ebd layer_norm
  bool checkpoint_layers = false;                 // model.activation_checkpointing
  ForwardTaps* taps = nullptr;                    // distillation's, set by the generator's forward

 private:
  int64_t buckets_, max_relative_, span_;
};
TORCH_MODULE(DebertaV2Model);

class DebertaV2ForMaskedLMImpl : public RtdGeneratorImpl {
 public:
  /// Initialised as transformers does: normal(0, initializer_range) linear and embedding
  /// weights, zero biases, LayerNorm 1 / 0, the [PAD] and padded rows zero.
  DebertaV2ForMaskedLMImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) override;
  torch::Tensor last_hidden_states(const MlmInputs& inputs) override;
  void init_weights() override;
  torch::Tensor word_embeddings() const override { return deberta->embeddings->word_embeddings->weight; }
  TensorDict hf_state_dict() override;
  TensorDict hf_gradients() override;
  void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) override;
  void apply_phase_settings(const config::ModelConfig& phase) override {
    MaskedLmImpl::apply_phase_settings(phase);
    deberta->checkpoint_layers = phase.activation_checkpointing;
  }

  // ---- as the pair's generator (rtd/rtd_networks.h) ----
  torch::Tensor selected_logits(const MlmInputs& inputs) override;
  torch::Tensor token_vectors(const torch::Tensor& ids) override { return deberta->embeddings->word_embeddings(ids); }
  torch::Tensor add_shared_tables(const torch::Tensor& words, const MlmInputs& inputs) override {
    return deberta->embeddings->add_tables(words, inputs.token_type_ids);
  }
  torch::Tensor decoder_bias() const override { return predictions->bias; }
  std::string word_embeddings_key() const override;
  bool is_shared_key(const std::string& key) const override;
  bool is_tied_decoder_key(const std::string& key) const override;
  bool is_buffer_key(const std::string& key) const override;

  DebertaV2Model deberta{nullptr};
  MlmHead predictions{nullptr};  // "cls.predictions"
};
TORCH_MODULE(DebertaV2ForMaskedLM);

}  // namespace mlm::model

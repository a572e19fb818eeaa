#pragma once
// What is particular to one architecture, behind one small interface. Each model/<arch>/ folder
// defines its ArchitectureSpec (<arch>_spec.cpp) and src/model/architectures.cpp registers it
// with one line; the rest of the house (the factory, Hugging Face config.json both ways, the
// export, model.init_from, mlm-finetune's heads, mlm-bench's FLOPs, the bounds on a hub file)
// asks the spec and never switches on the architecture.
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"
#include "mlm/model/pretrained/new_token_rows.h"
#include "mlm/model/tensor_dict.h"
#include "mlm/model/hf/weight_format.h"

namespace mlm::model {

class RtdNetworks;

/// The head transformers' ...ForSequenceClassification / ...ForTokenClassification puts on the
/// encoder, its new weights drawn as transformers initialises them (seed first).
class ClassificationHeadImpl : public torch::nn::Module {
 public:
  /// The encoder's output [B,S,H] to logits, fp32: [B, labels] (a sequence task, read at the
  /// first token) or [B, S, labels] (a token task).
  virtual torch::Tensor forward(const torch::Tensor& hidden) = 0;
  /// The head's weights under transformers' key names.
  virtual TensorDict hf_state_dict() = 0;
  /// Copies the head's weights from a classification checkpoint; false when it holds none.
  virtual bool load_hf_state_dict(const TensorDict& state) = 0;

 protected:
  /// The head's dropout (the functional kernel, which follows the module's training flag).
  torch::Tensor dropout(const torch::Tensor& x, double p) const;
};
/// A shared handle on a ClassificationHeadImpl, made from any architecture's head.
class ClassificationHead : public torch::nn::ModuleHolder<ClassificationHeadImpl> {
 public:
  ClassificationHead(std::nullptr_t) : ModuleHolder(nullptr) {}
  ClassificationHead(std::shared_ptr<ClassificationHeadImpl> impl) : ModuleHolder(std::move(impl)) {}
};

/// One self-attention layer on its own (no tables) whose scores have a fused kernel and the ATen
/// composition it replaces, for `mlm-bench --attention` to time both.
class AttentionUnderTest {
 public:
  virtual ~AttentionUnderTest() = default;
  /// attention.self on x [B,S,H] (the context before the output projection), with the relative
  /// rows computed each call as the encoder computes them; `fused`: by the fused kernel.
  virtual torch::Tensor self_attention(const torch::Tensor& x, bool fused) = 0;
  /// The relative-position rows the last call read.
  virtual int64_t relative_rows() const = 0;
  /// The layer's module: to(device), train(), zero_grad().
  virtual torch::nn::Module& module() = 0;
};

/// A tensor of a Hugging Face state dict that carries a config.json dimension: whatever its
/// key's prefix, a key ending in `key_suffix` has size `multiple` x `value` along `dim`.
struct WeightDimension {
  const char* key_suffix;
  int64_t dim;
  const char* config_key;
  int64_t value;
  int64_t multiple = 1;
};

/// The entries of `state` whose key starts with one of `prefixes`, in order.
TensorDict keys_under(const TensorDict& state, const std::vector<std::string>& prefixes);

class ArchitectureSpec {
 public:
  virtual ~ArchitectureSpec() = default;

  // ---- identity --------------------------------------------------------------------------
  /// model.architecture's value.
  virtual config::Architecture architecture() const = 0;
  /// How people write it ("BERT", "XLM-RoBERTa"), for messages.
  virtual std::string display_name() const = 0;
  /// config.json's model_type.
  virtual std::string hf_model_type() const = 0;
  /// The stem of transformers' class names: "Bert" (BertForMaskedLM, ...), "XLMRoberta".
  virtual std::string hf_class_stem() const = 0;
  /// The key prefixes of the encoder in the HF state dict, the keys a classification model
  /// shares with the masked LM: {"bert."}; ModernBERT's {"model.", "head."}.
  virtual std::vector<std::string> encoder_key_prefixes() const = 0;

  // ---- the model ---------------------------------------------------------------------------
  /// The MaskedLm of `config` (model.objective picks among an architecture's heads),
  /// initialised: seed with torch::manual_seed first.
  virtual MaskedLm build(const config::ModelConfig& config, int64_t vocab_rows, int64_t pad_id) const = 0;
  /// The classification head of a task for `encoder` (this architecture's): per_sequence for
  /// a sequence task, else one label per token.
  virtual ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const = 0;
  /// The encoder's weights as a classification model of this architecture names them: the
  /// keys of hf_state_dict() under encoder_key_prefixes() (a pair: its discriminator's, with
  /// the tables as the export writes them).
  virtual TensorDict encoder_hf_state_dict(MaskedLm encoder) const;
  /// Forward FLOPs per token of a training step's model (the MLM head on the selected share
  /// `mlm_probability` of the tokens under model.sparse_head), 2 per multiply-add.
  virtual double forward_flops_per_token(const config::ModelConfig& config, int64_t seq_len, int64_t vocab,
                                         double mlm_probability) const = 0;
  /// The width of a layer's feed-forward input product: intermediate_size, or twice that for a
  /// gated block whose one product gives input and gate (ModernBERT's GeGLU Wi).
  virtual int64_t feed_forward_in_width(const config::ModelConfig& config) const { return config.intermediate_size; }
  /// Whether a layer projects queries, keys and values as three products (DeBERTa) rather than
  /// one fused [H, 3H] product.
  virtual bool separate_qkv_products() const { return false; }
  /// Whether self-attention is DeBERTa's disentangled kind (what `mlm-bench --attention` times).
  virtual bool disentangled_attention() const { return false; }
  /// One layer of `config`'s shape whose disentangled self-attention `mlm-bench --attention`
  /// times, initialised (seed with torch::manual_seed first); only where disentangled_attention().
  virtual std::unique_ptr<AttentionUnderTest> attention_under_test(const config::ModelConfig& config) const;
  /// The fp32 parameters a model of `config`'s shape holds with `vocab_rows` embedding rows,
  /// in double (a file's dimensions may overflow int64); within a few percent (biases and
  /// norms aside), for refusing a shape the machine's memory cannot hold.
  virtual double estimated_parameters(const config::ModelConfig& config, double vocab_rows) const = 0;

  /// Whether forward() fills MaskedLmImpl::taps (distillation's hidden states and a layer's
  /// q/k/v: the cosine and attention-relation losses, train/distill/); a replaced-token-detection
  /// pair fills its generator's.
  virtual bool fills_forward_taps() const { return false; }

  // ---- Hugging Face config.json and weights ------------------------------------------------
  /// config.json's fields on top of `base` (what the file does not say). CheckpointError
  /// naming `path` and the key for a value of the wrong type or one mlm-train does not compute.
  virtual config::ModelConfig config_from_hf(const nlohmann::json& json, const std::string& path,
                                             config::ModelConfig base) const = 0;
  /// config.json of `model` as transformers writes it for the masked LM.
  virtual nlohmann::json hf_config_json(const MaskedLmImpl& model) const = 0;
  /// The tensors that carry config.json's dimensions, checked against a file's weights before
  /// a model is built (pretrained/config_weight_agreement.cpp).
  virtual std::vector<WeightDimension> weight_dimensions(const config::ModelConfig& config) const = 0;
  /// The pattern of a layer's keys, its first group the layer number (e.g. "encoder\.layer\.(\d+)\.").
  virtual std::string layer_key_pattern() const = 0;

  /// Writes the export of `model` into the existing directory `dir`: config.json and the
  /// weights (a pair: its two directories). Returns the directories that hold a model (for the
  /// tokenizer files).
  virtual std::vector<std::string> write_hf(MaskedLm model, const std::string& dir, WeightFormat format) const;
  /// model.init_from: `dir`'s weights into `model` (pretrained/init_from.h; a pair directory
  /// through rtd/rtd_directory.h).
  virtual void init_from(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) const;

  /// The options a config.json may give that the weights alone do not tell apart, where
  /// `theirs` differs from `ours` ("key value (set model.key: ours)", comma-separated; "" when
  /// none): checked before loading a file into a model.
  virtual std::string option_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs) const {
    return "";
  }

  // ---- replaced-token detection (model/rtd/) ------------------------------------------------
  /// This architecture's generator, discriminator body and RTD head for the pair
  /// (rtd/rtd_pair.h, model.objective rtd); nullptr where it has none.
  virtual const RtdNetworks* rtd_networks() const { return nullptr; }

  // ---- a directory layout of its own (the pair's generator/ + discriminator/) --------------
  /// Whether `dir` is laid out as this architecture's own kind of directory (not a plain
  /// Hugging Face model directory). Such a directory is opened and init_from through this spec.
  /// By default: the pair's directory (rtd/rtd_directory.h) where rtd_networks() is given.
  virtual bool owns_directory(const std::string& dir) const;
  /// The model config of an owned directory, on top of `base`; where its tokenizer files are.
  virtual config::ModelConfig directory_config(const std::string& dir, config::ModelConfig base) const;
  virtual std::string tokenizer_directory(const std::string& dir) const;
};

}  // namespace mlm::model

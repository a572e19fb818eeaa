#include "mlm/model/modernbert/modernbert_spec.h"

#include <algorithm>

#include "mlm/model/modernbert/classification_head.h"
#include "mlm/model/modernbert/modernbert.h"
#include "mlm/model/modernbert/modernbert_config_json.h"

namespace mlm::model {
namespace {

class ModernBertSpec : public ArchitectureSpec {
 public:
  config::Architecture architecture() const override { return config::Architecture::modernbert; }
  std::string display_name() const override { return "ModernBERT"; }
  std::string hf_model_type() const override { return "modernbert"; }
  std::string hf_class_stem() const override { return "ModernBert"; }
  // The classification model keeps the MLM head's dense and norm (its classifier reads them).
  std::vector<std::string> encoder_key_prefixes() const override { return {"model.", "head."}; }

  MaskedLm build(const config::ModelConfig& config, int64_t vocab_rows, int64_t pad_id) const override {
    return ModernBertForMaskedLM(config, vocab_rows, pad_id);
  }
  ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const override {
    auto modernbert = std::dynamic_pointer_cast<ModernBertForMaskedLMImpl>(encoder.ptr());
    return ClassificationHead(std::make_shared<ModernBertClassificationHeadImpl>(ModernBertForMaskedLM(modernbert),
                                                                                 per_sequence, num_labels));
  }

  // Wqkv + Wo: 4H^2; GeGLU Wi (H x 2I) + Wo: 3HI. A local layer's query sees at most
  // local_attention + 1 keys: the model's work (what runs is all S keys under a mask, or
  // 2 * local_attention when the layer goes block by block: local_attention.h).
  double forward_flops_per_token(const config::ModelConfig& c, int64_t seq_len, int64_t vocab,
                                 double mlm_probability) const override {
    const double L = static_cast<double>(c.num_hidden_layers), H = static_cast<double>(c.hidden_size);
    const double I = static_cast<double>(c.intermediate_size), S = static_cast<double>(seq_len);
    const double V = static_cast<double>(vocab);
    const double p = c.sparse_head ? mlm_probability : 1.0;
    double attention = 0;
    for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
      const bool global = i % c.global_attn_every_n_layers == 0;
      attention += 4 * H * (global ? S : std::min<double>(S, static_cast<double>(c.local_attention + 1)));
    }
    return 2 * L * (4 * H * H + 3 * H * I) + attention + 2 * p * (H * H + H * V);
  }

  // Rotary positions (no position table); the gated Wi is twice as tall.
  int64_t feed_forward_in_width(const config::ModelConfig& c) const override { return 2 * c.intermediate_size; }

  double estimated_parameters(const config::ModelConfig& c, double vocab_rows) const override {
    const double hidden = static_cast<double>(c.hidden_size);
    const double layer = 4 * hidden * hidden + 3 * hidden * static_cast<double>(c.intermediate_size);
    return vocab_rows * hidden + static_cast<double>(c.num_hidden_layers) * layer + hidden * hidden + vocab_rows;
  }

  config::ModelConfig config_from_hf(const nlohmann::json& json, const std::string& path,
                                     config::ModelConfig base) const override {
    return modernbert_config_from_hf(json, path, std::move(base));
  }
  nlohmann::json hf_config_json(const MaskedLmImpl& model) const override { return modernbert_config_json(model); }
  std::vector<WeightDimension> weight_dimensions(const config::ModelConfig& c) const override {
    std::vector<WeightDimension> dimensions = {
        {"embeddings.tok_embeddings.weight", 1, "hidden_size", c.hidden_size},
        {"layers.0.attn.Wqkv.weight", 0, "hidden_size", c.hidden_size, 3},
        {"layers.0.mlp.Wi.weight", 0, "intermediate_size", c.intermediate_size, 2},  // gated: two halves
    };
    // vocab_size 0 means the tokenizer's size: then the rows are not config.json's to say.
    if (c.vocab_size > 0) dimensions.push_back({"embeddings.tok_embeddings.weight", 0, "vocab_size", c.vocab_size});
    return dimensions;
  }
  std::string layer_key_pattern() const override { return R"(layers\.(\d+)\.)"; }
  bool fills_forward_taps() const override { return true; }
};

}  // namespace

const ArchitectureSpec& modernbert_spec() {
  static const ModernBertSpec spec;
  return spec;
}

}  // namespace mlm::model

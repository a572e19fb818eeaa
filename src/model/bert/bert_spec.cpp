#include "mlm/model/bert/bert_spec.h"

#include "mlm/model/bert/bert.h"
#include "mlm/model/bert/bert_config_json.h"
#include "mlm/model/bert/classification_heads.h"
#include "mlm/util/logging.h"

namespace mlm::model {

double bert_layers_flops(const config::ModelConfig& m, double S) {
  const double h = static_cast<double>(m.hidden_size), i = static_cast<double>(m.intermediate_size);
  return 2 * static_cast<double>(m.num_hidden_layers) * (4 * h * h + 2 * h * i + 2 * S * h);
}

double bert_network_parameters(const config::ModelConfig& c, double vocab_rows, double embedding, double hidden,
                               double layers, double intermediate) {
  double embeddings = vocab_rows * embedding;  // tied with the decoder
  embeddings += (static_cast<double>(c.max_position_embeddings) + static_cast<double>(c.type_vocab_size)) * embedding;
  if (embedding != hidden) embeddings += embedding * hidden;
  const double layer = 4 * hidden * hidden + 2 * hidden * intermediate;  // q, k, v, out; the feed-forward
  const double head = hidden * embedding + vocab_rows;
  return embeddings + layers * layer + head;
}

std::vector<WeightDimension> bert_weight_dimensions(const config::ModelConfig& c, int64_t embedding,
                                                    const char* embedding_key) {
  std::vector<WeightDimension> dimensions = {
      {"embeddings.word_embeddings.weight", 1, embedding_key, embedding},
      {"embeddings.position_embeddings.weight", 0, "max_position_embeddings", c.max_position_embeddings},
      {"embeddings.token_type_embeddings.weight", 0, "type_vocab_size", c.type_vocab_size},
      {"encoder.layer.0.attention.self.query.weight", 0, "hidden_size", c.hidden_size},
      {"encoder.layer.0.intermediate.dense.weight", 0, "intermediate_size", c.intermediate_size},
  };
  // vocab_size 0 means the tokenizer's size: then the rows are not config.json's to say.
  if (c.vocab_size > 0) dimensions.push_back({"embeddings.word_embeddings.weight", 0, "vocab_size", c.vocab_size});
  return dimensions;
}

namespace {

// What BERT, RoBERTa and XLM-R share: one model class (BertForPreTraining), BertConfig's layer
// fields, BERT's layers.
class BertFamilySpec : public ArchitectureSpec {
 public:
  MaskedLm build(const config::ModelConfig& config, int64_t vocab_rows, int64_t pad_id) const override {
    return BertForPreTraining(config, vocab_rows, pad_id);
  }
  double forward_flops_per_token(const config::ModelConfig& c, int64_t seq_len, int64_t vocab,
                                 double mlm_probability) const override {
    const double H = static_cast<double>(c.hidden_size), V = static_cast<double>(vocab);
    const double p = c.sparse_head ? mlm_probability : 1.0;
    return bert_layers_flops(c, static_cast<double>(seq_len)) + 2 * p * (H * H + H * V);
  }
  double estimated_parameters(const config::ModelConfig& c, double vocab_rows) const override {
    const double h = static_cast<double>(c.hidden_size);
    return bert_network_parameters(c, vocab_rows, h, h, static_cast<double>(c.num_hidden_layers),
                                   static_cast<double>(c.intermediate_size));
  }
  std::vector<WeightDimension> weight_dimensions(const config::ModelConfig& c) const override {
    return bert_weight_dimensions(c, c.hidden_size, "hidden_size");
  }
  std::string layer_key_pattern() const override { return R"(encoder\.layer\.(\d+)\.)"; }
  bool fills_forward_taps() const override { return true; }
};

class BertSpec : public BertFamilySpec {
 public:
  config::Architecture architecture() const override { return config::Architecture::bert; }
  std::string display_name() const override { return "BERT"; }
  std::string hf_model_type() const override { return "bert"; }
  std::string hf_class_stem() const override { return "Bert"; }
  std::vector<std::string> encoder_key_prefixes() const override { return {"bert."}; }
  ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const override {
    auto bert = std::dynamic_pointer_cast<BertForPreTrainingImpl>(encoder.ptr());
    return ClassificationHead(std::make_shared<BertClassificationHeadImpl>(BertForPreTraining(bert), per_sequence,
                                                                           num_labels));
  }
  config::ModelConfig config_from_hf(const nlohmann::json& json, const std::string& path,
                                     config::ModelConfig base) const override {
    return bert_config_from_hf(json, path, std::move(base));
  }
  nlohmann::json hf_config_json(const MaskedLmImpl& model) const override { return bert_config_json(model); }
  std::vector<std::string> write_hf(MaskedLm model, const std::string& dir, WeightFormat format) const override {
    if (model->config().norm == config::NormPosition::pre)
      log::warn("export", "model.norm is pre: Hugging Face BERT is post-LN and cannot load "
                "bert.encoder.final_layer_norm; the export is for mlm-train (model.init_from) and "
                "custom code");
    return ArchitectureSpec::write_hf(model, dir, format);
  }
};

// RoBERTa and XLM-R: RobertaForMaskedLM's names, RoBERTa's positions (from pad_token_id + 1).
class RobertaSpec : public BertFamilySpec {
 public:
  explicit RobertaSpec(bool xlm) : xlm_(xlm) {}
  config::Architecture architecture() const override {
    return xlm_ ? config::Architecture::xlm_roberta : config::Architecture::roberta;
  }
  std::string display_name() const override { return xlm_ ? "XLM-RoBERTa" : "RoBERTa"; }
  std::string hf_model_type() const override { return xlm_ ? "xlm-roberta" : "roberta"; }
  std::string hf_class_stem() const override { return xlm_ ? "XLMRoberta" : "Roberta"; }
  std::vector<std::string> encoder_key_prefixes() const override { return {"roberta."}; }
  ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const override {
    return ClassificationHead(std::make_shared<DenseClassificationHeadImpl>(
        encoder->config(), per_sequence, num_labels, [](const torch::Tensor& x) { return torch::tanh(x); }));
  }
  config::ModelConfig config_from_hf(const nlohmann::json& json, const std::string& path,
                                     config::ModelConfig base) const override {
    return roberta_config_from_hf(json, path, std::move(base));
  }
  nlohmann::json hf_config_json(const MaskedLmImpl& model) const override { return roberta_config_json(model); }

 private:
  bool xlm_;
};

}  // namespace

const ArchitectureSpec& bert_spec() {
  static const BertSpec spec;
  return spec;
}

const ArchitectureSpec& roberta_spec() {
  static const RobertaSpec spec(/*xlm=*/false);
  return spec;
}

const ArchitectureSpec& xlm_roberta_spec() {
  static const RobertaSpec spec(/*xlm=*/true);
  return spec;
}

}  // namespace mlm::model

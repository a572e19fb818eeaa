#include "mlm/model/electra/electra_spec.h"

#include <filesystem>

#include "mlm/model/bert/bert_spec.h"
#include "mlm/model/bert/classification_heads.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/electra/electra_hf.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace {

namespace fs = std::filesystem;

class ElectraSpec : public ArchitectureSpec {
 public:
  config::Architecture architecture() const override { return config::Architecture::electra; }
  std::string display_name() const override { return "ELECTRA"; }
  std::string hf_model_type() const override { return "electra"; }
  std::string hf_class_stem() const override { return "Electra"; }
  std::vector<std::string> encoder_key_prefixes() const override { return {"electra."}; }

  MaskedLm build(const config::ModelConfig& config, int64_t vocab_rows, int64_t pad_id) const override {
    if (config.objective == config::Objective::rtd) return ElectraForPreTraining(config, vocab_rows, pad_id);
    return ElectraForMaskedLM(config, vocab_rows, pad_id);
  }

  ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const override {
    return ClassificationHead(std::make_shared<DenseClassificationHeadImpl>(
        encoder->config(), per_sequence, num_labels, [](const torch::Tensor& x) { return torch::gelu(x); }));
  }

  // A pair's encoder is its discriminator, with the embeddings as the export writes them
  // (under gdes the sum); a generator alone is its own.
  TensorDict encoder_hf_state_dict(MaskedLm encoder) const override {
    auto* pair = dynamic_cast<ElectraForPreTrainingImpl*>(encoder.get());
    return keys_under(pair ? to_hf_pair(*pair).discriminator : encoder->hf_state_dict(), encoder_key_prefixes());
  }

  // Embedding projection E -> H, BERT layers; the generator's head H -> E and decoder E x V on
  // the selected positions; under rtd the discriminator too, its head (H^2 + H) on every token.
  // The sampling's work is O(p V) per token, left out like the loss's.
  double forward_flops_per_token(const config::ModelConfig& c, int64_t seq_len, int64_t vocab,
                                 double mlm_probability) const override {
    const double H = static_cast<double>(c.hidden_size), V = static_cast<double>(vocab);
    const double S = static_cast<double>(seq_len);
    const double p = c.sparse_head ? mlm_probability : 1.0;
    const double E = static_cast<double>(config::electra_embedding_size(c));
    const auto layers = [&](const config::ModelConfig& m) {
      const double h = static_cast<double>(m.hidden_size);
      return 2 * (h == E ? 0 : E * h) + bert_layers_flops(m, S);
    };
    if (c.objective != config::Objective::rtd) return layers(c) + 2 * p * (H * E + E * V);
    const auto g = generator_config(c);
    const double gh = static_cast<double>(g.hidden_size);
    return layers(g) + 2 * p * (gh * E + E * V) + layers(c) + 2 * (H * H + H);
  }

  double estimated_parameters(const config::ModelConfig& c, double vocab_rows) const override {
    const auto network = [&](double hidden, double layers, double intermediate) {
      const double embedding = c.embedding_size > 0 ? static_cast<double>(c.embedding_size) : hidden;
      return bert_network_parameters(c, vocab_rows, embedding, hidden, layers, intermediate);
    };
    double total = network(static_cast<double>(c.hidden_size), static_cast<double>(c.num_hidden_layers),
                           static_cast<double>(c.intermediate_size));
    if (c.objective == config::Objective::rtd) {
      const auto g = config::generator_shape(c);
      total += network(static_cast<double>(g.hidden_size), static_cast<double>(g.num_hidden_layers),
                       static_cast<double>(g.intermediate_size));
    }
    return total;
  }

  config::ModelConfig config_from_hf(const nlohmann::json& json, const std::string& path,
                                     config::ModelConfig base) const override {
    return electra_config_from_hf(json, path, std::move(base));
  }
  nlohmann::json hf_config_json(const MaskedLmImpl& model) const override {
    return electra_config_json(model, "ElectraForMaskedLM");
  }
  std::vector<WeightDimension> weight_dimensions(const config::ModelConfig& c) const override {
    const int64_t embedding = config::electra_embedding_size(c);
    return bert_weight_dimensions(c, embedding, embedding != c.hidden_size ? "embedding_size" : "hidden_size");
  }
  std::string layer_key_pattern() const override { return R"(encoder\.layer\.(\d+)\.)"; }

  std::vector<std::string> write_hf(MaskedLm model, const std::string& dir, WeightFormat format) const override {
    auto* pair = dynamic_cast<ElectraForPreTrainingImpl*>(model.get());
    if (!pair) return ArchitectureSpec::write_hf(model, dir, format);
    write_electra_pair(*pair, dir, format);
    return {(fs::path(dir) / "generator").string(), (fs::path(dir) / "discriminator").string()};
  }

  void init_from(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) const override {
    if (is_electra_pair_dir(dir)) {
      if (!new_tokens.empty())
        throw CheckpointError(dir + ": tokenizer.add_tokens does not grow an ELECTRA generator and discriminator "
                              "pair; continue one network, or add the tokens before pretraining the pair");
      auto* pair = dynamic_cast<ElectraForPreTrainingImpl*>(model.get());
      if (!pair)
        throw CheckpointError(dir + ": holds an ELECTRA generator and discriminator; continue the pair with "
                              "model.architecture electra and model.objective rtd, or one of them with "
                              "model.init_from " + (fs::path(dir) / "generator").string());
      init_electra_pair(*pair, dir);
      return;
    }
    const auto config_path = (fs::path(dir) / "config.json").string();
    if (model->has_rtd() && fs::exists(config_path))
      throw CheckpointError(config_path + ": one network, but model.objective rtd continues a generator and its "
                            "discriminator: a directory holding generator/ and discriminator/ (as mlm-export "
                            "writes them)");
    ArchitectureSpec::init_from(model, dir, new_tokens);
  }

  bool owns_directory(const std::string& dir) const override { return is_electra_pair_dir(dir); }
  config::ModelConfig directory_config(const std::string& dir, config::ModelConfig base) const override {
    return electra_pair_config(dir, std::move(base));
  }
  std::string tokenizer_directory(const std::string& dir) const override {
    return (fs::path(dir) / "discriminator").string();
  }
};

}  // namespace

const ArchitectureSpec& electra_spec() {
  static const ElectraSpec spec;
  return spec;
}

}  // namespace mlm::model

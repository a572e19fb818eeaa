#include "mlm/model/electra/electra_spec.h"

#include <filesystem>

#include "mlm/model/bert/bert_spec.h"
#include "mlm/model/bert/classification_heads.h"
#include "mlm/model/electra/electra.h"
#include "mlm/model/electra/electra_hf.h"
#include "mlm/model/rtd/rtd_directory.h"
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

  bool fills_forward_taps() const override { return true; }  // objective mlm: the generator's forward

  MaskedLm build(const config::ModelConfig& config, int64_t vocab_rows, int64_t pad_id) const override {
    if (config.objective == config::Objective::rtd) return RtdPair(*this, config, vocab_rows, pad_id);
    return ElectraForMaskedLM(config, vocab_rows, pad_id);
  }

  ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const override {
    return ClassificationHead(std::make_shared<DenseClassificationHeadImpl>(
        encoder->config(), per_sequence, num_labels, [](const torch::Tensor& x) { return torch::gelu(x); }));
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
                       static_cast<double>(g.intermediate_size)) +
               rtd_delta_parameters(c, vocab_rows);
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

  const RtdNetworks* rtd_networks() const override { return &electra_rtd_networks(); }

  // A directory of one network continued as a pair: refused (the hub has ELECTRA's pairs whole).
  void init_from(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) const override {
    const auto config_path = (fs::path(dir) / "config.json").string();
    if (model->has_rtd() && !owns_directory(dir) && fs::exists(config_path))
      throw CheckpointError(config_path + ": one network, but model.objective rtd continues a generator and its "
                            "discriminator: a directory holding generator/ and discriminator/ (as mlm-export "
                            "writes them)");
    ArchitectureSpec::init_from(model, dir, new_tokens);
  }
};

}  // namespace

const ArchitectureSpec& electra_spec() {
  static const ElectraSpec spec;
  return spec;
}

}  // namespace mlm::model

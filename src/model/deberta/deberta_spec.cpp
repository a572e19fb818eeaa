#include "mlm/model/deberta/deberta_spec.h"

#include <filesystem>

#include "mlm/model/bert/classification_heads.h"
#include "mlm/model/deberta/deberta.h"
#include "mlm/model/deberta/deberta_attention_under_test.h"
#include "mlm/model/deberta/deberta_config_json.h"
#include "mlm/model/deberta/deberta_rtd.h"
#include "mlm/model/hf/config_fields.h"
#include "mlm/model/rtd/rtd_directory.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace {
namespace fs = std::filesystem;

// DebertaV2For{Sequence,Token}Classification's head: sequence: ContextPooler (the first token,
// pooler_dropout 0, dense, hidden_act), dropout, classifier; token: dropout, classifier.
class DebertaClassificationHeadImpl : public ClassificationHeadImpl {
 public:
  DebertaClassificationHeadImpl(const config::ModelConfig& c, bool per_sequence, int64_t num_labels)
      : dropout_p_(c.hidden_dropout_prob), act_(c.hidden_act) {
    if (per_sequence) {
      pooler = register_module("pooler", torch::nn::Linear(c.hidden_size, c.hidden_size));
      normal_init(pooler, c.initializer_range);
    }
    classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, num_labels));
    normal_init(classifier, c.initializer_range);
  }
  torch::Tensor forward(const torch::Tensor& hidden) override {
    auto features = pooler ? activation(linear(pooler, hidden.select(1, 0)), act_) : hidden;
    return linear(classifier, dropout(features, dropout_p_)).to(torch::kFloat32);
  }
  TensorDict hf_state_dict() override {
    TensorDict out;
    if (pooler) add_linear(out, pooler, "pooler.dense.");
    add_linear(out, classifier, "classifier.");
    return out;
  }
  bool load_hf_state_dict(const TensorDict& state) override {
    if (!load_linear(classifier, state, "classifier.")) return false;
    if (pooler) load_linear(pooler, state, "pooler.dense.");
    return true;
  }

 private:
  double dropout_p_;
  config::Activation act_;
  torch::nn::Linear pooler{nullptr}, classifier{nullptr};
};

// The options the weights alone may not tell apart (deberta_option_differences) must be the run's.
void require_same_deberta_options(const config::ModelConfig& ours, const std::string& config_path) {
  if (!fs::exists(config_path)) return;
  const auto theirs = deberta_config_from_hf(read_json_file(config_path), config_path, ours);
  const auto differences = deberta_option_differences(ours, theirs);
  if (!differences.empty())
    throw CheckpointError(config_path + ": the DeBERTa options it gives differ from this model's: " + differences);
}

class DebertaV2Spec : public ArchitectureSpec {
 public:
  config::Architecture architecture() const override { return config::Architecture::deberta_v2; }
  std::string display_name() const override { return "DeBERTa-v2"; }
  std::string hf_model_type() const override { return "deberta-v2"; }
  std::string hf_class_stem() const override { return "DebertaV2"; }
  std::vector<std::string> encoder_key_prefixes() const override { return {"deberta."}; }

  bool fills_forward_taps() const override { return true; }  // objective mlm: the generator's forward

  MaskedLm build(const config::ModelConfig& config, int64_t vocab_rows, int64_t pad_id) const override {
    if (config.objective == config::Objective::rtd) return RtdPair(*this, config, vocab_rows, pad_id);
    return DebertaV2ForMaskedLM(config, vocab_rows, pad_id);
  }

  const RtdNetworks* rtd_networks() const override { return &deberta_rtd_networks(); }
  std::string option_differences(const config::ModelConfig& ours, const config::ModelConfig& theirs) const override {
    return deberta_option_differences(ours, theirs);
  }

  void init_from(MaskedLm model, const std::string& dir, const std::vector<NewTokenRow>& new_tokens) const override {
    if (auto* pair = model->rtd_pair(); pair && !owns_directory(dir)) {
      // One network: a hub deberta-v3 checkpoint (the discriminator), continued as a pair.
      if (!new_tokens.empty())
        throw CheckpointError(dir + ": tokenizer.add_tokens does not grow a DeBERTa checkpoint continued as a "
                              "generator and discriminator pair");
      init_deberta_pair_from_discriminator(*pair, dir);
      return;
    }
    if (!owns_directory(dir)) require_same_deberta_options(model->config(), (fs::path(dir) / "config.json").string());
    ArchitectureSpec::init_from(model, dir, new_tokens);
  }

  ClassificationHead classification_head(MaskedLm encoder, bool per_sequence, int64_t num_labels) const override {
    return ClassificationHead(
        std::make_shared<DebertaClassificationHeadImpl>(encoder->config(), per_sequence, num_labels));
  }

  // BERT's layers (q, k, v, out: 4H^2; the feed-forward 2HI; scores and context 4SH) plus the
  // disentangled terms: each projects the 2k relative embeddings (2kH^2, shared over the
  // batch: not counted per token) and scores every query against them (2 x 2k x H per token).
  double forward_flops_per_token(const config::ModelConfig& c, int64_t seq_len, int64_t vocab,
                                 double mlm_probability) const override {
    const double L = static_cast<double>(c.num_hidden_layers), H = static_cast<double>(c.hidden_size);
    const double I = static_cast<double>(c.intermediate_size), S = static_cast<double>(seq_len);
    const double E = static_cast<double>(config::electra_embedding_size(c)), V = static_cast<double>(vocab);
    const double terms = static_cast<double>(c.relative_attention ? c.pos_att_type.size() : 0);
    const double span = 2.0 * static_cast<double>(config::relative_span(c));
    const double p = c.sparse_head ? mlm_probability : 1.0;
    const double layers = 2 * L * (4 * H * H + 2 * H * I + 2 * S * H + terms * span * H);
    if (c.objective != config::Objective::rtd) return layers + 2 * p * (H * E + E * V);
    // rtd: the generator (its head on the selected positions, as DebertaV2ForMaskedLM runs it)
    // and the discriminator's layers and head (H^2 + H per token).
    const auto g = generator_config(c);
    return forward_flops_per_token(g, seq_len, vocab, mlm_probability) + layers + 2 * (H * H + H);
  }
  bool separate_qkv_products() const override { return true; }
  bool disentangled_attention() const override { return true; }
  std::unique_ptr<AttentionUnderTest> attention_under_test(const config::ModelConfig& config) const override {
    return deberta_attention_under_test(config);
  }

  double estimated_parameters(const config::ModelConfig& c, double vocab_rows) const override {
    const double h = static_cast<double>(c.hidden_size), e = static_cast<double>(config::electra_embedding_size(c));
    double embeddings = vocab_rows * e + static_cast<double>(c.type_vocab_size) * e;
    if (c.position_biased_input) embeddings += static_cast<double>(c.max_position_embeddings) * e;
    if (e != h) embeddings += e * h;
    const double layer = 4 * h * h + 2 * h * static_cast<double>(c.intermediate_size);
    const double relative = 2 * static_cast<double>(config::relative_span(c)) * h;
    if (c.objective != config::Objective::rtd)
      return embeddings + static_cast<double>(c.num_hidden_layers) * layer + relative + h * e + vocab_rows;
    // rtd: the generator with the tables, the discriminator's layers and RTD head (and the
    // delta under gdes).
    return estimated_parameters(generator_config(c), vocab_rows) + static_cast<double>(c.num_hidden_layers) * layer +
           relative + (e != h ? e * h : 0) + h * h + h + rtd_delta_parameters(c, vocab_rows);
  }

  config::ModelConfig config_from_hf(const nlohmann::json& json, const std::string& path,
                                     config::ModelConfig base) const override {
    return deberta_config_from_hf(json, path, std::move(base));
  }
  nlohmann::json hf_config_json(const MaskedLmImpl& model) const override { return deberta_config_json(model); }
  std::vector<WeightDimension> weight_dimensions(const config::ModelConfig& c) const override {
    std::vector<WeightDimension> dimensions = {
        {"embeddings.word_embeddings.weight", 1, "embedding_size", config::electra_embedding_size(c)},
        {"encoder.layer.0.attention.self.query_proj.weight", 0, "hidden_size", c.hidden_size},
        {"encoder.layer.0.intermediate.dense.weight", 0, "intermediate_size", c.intermediate_size},
    };
    // vocab_size 0 means the tokenizer's size: then the rows are not config.json's to say.
    if (c.vocab_size > 0) dimensions.push_back({"embeddings.word_embeddings.weight", 0, "vocab_size", c.vocab_size});
    return dimensions;
  }
  std::string layer_key_pattern() const override { return R"(encoder\.layer\.(\d+)\.)"; }
};

}  // namespace

const ArchitectureSpec& deberta_v2_spec() {
  static const DebertaV2Spec spec;
  return spec;
}

}  // namespace mlm::model

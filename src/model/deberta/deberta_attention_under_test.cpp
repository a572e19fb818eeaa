#include "mlm/model/deberta/deberta_attention_under_test.h"

#include "mlm/model/deberta/deberta.h"

namespace mlm::model {
namespace {

config::ModelConfig one_layer(config::ModelConfig config) {
  config.num_hidden_layers = 1;
  return config;
}

class DebertaAttentionUnderTest : public AttentionUnderTest {
 public:
  explicit DebertaAttentionUnderTest(const config::ModelConfig& config)
      : encoder_(one_layer(config), /*padded_vocab=*/8, /*pad_id=*/0, /*own_tables=*/false) {}

  torch::Tensor self_attention(const torch::Tensor& x, bool fused) override {
    auto* layer = encoder_->layers[0]->as<DebertaV2Layer>();
    layer->fused_scores = fused;
    const auto [rel, window] = encoder_->relative_rows(x.size(1), x.device());  // each call, as encode() does
    relative_rows_ = window.width;
    return layer->self_attention(x, torch::Tensor(), rel, window.index);
  }
  int64_t relative_rows() const override { return relative_rows_; }
  torch::nn::Module& module() override { return *encoder_; }

 private:
  DebertaV2Model encoder_;
  int64_t relative_rows_ = 0;
};

}  // namespace

std::unique_ptr<AttentionUnderTest> deberta_attention_under_test(const config::ModelConfig& config) {
  return std::make_unique<DebertaAttentionUnderTest>(config);
}

}  // namespace mlm::model

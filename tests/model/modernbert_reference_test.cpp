// Parity with `transformers`' own ModernBertForMaskedLM (the venv's, run live through
// tests/reference/hf_client.py modernbert_reference): the C++ model writes its config.json
// (the export's), its weights and a batch; transformers computes the logits of the selected
// positions, the loss and every gradient; fp32 must agree (logits 1e-5, gradients 1e-4), with
// padding, with documents kept apart, and with sequences longer than the local window.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/modernbert/modernbert.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with bert_reference_test.cpp.
namespace mlm::model::modernbert_reference {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 0, kBatch = 3, kSeq = 40;

struct Case {
  const char* name;
  bool padded;       // rows 1 and 2 end in padding
  bool documents;    // 2-3 documents per row, model.attend_across_documents false
  bool sparse_head;
  bool biases;       // every optional bias on, tanh GELU, layer count not a multiple of 3
};

config::ModelConfig tiny_modernbert(const Case& c) {
  config::ModelConfig m;
  m.architecture = config::Architecture::modernbert;
  m.hidden_size = 32;
  m.num_attention_heads = 4;
  m.intermediate_size = 48;
  m.num_hidden_layers = c.biases ? 5 : 4;  // global layers 0 and 3; the others local
  m.max_position_embeddings = 64;
  m.local_attention = 16;  // |q - k| <= 8, far shorter than the 40 positions
  m.layer_norm_eps = 1e-5;
  m.attention_probs_dropout_prob = 0.0;
  m.hidden_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;  // padded rows must stay out of everything
  m.sparse_head = c.sparse_head;
  m.attend_across_documents = !c.documents;
  if (c.biases) {
    m.norm_bias = m.attention_bias = m.mlp_bias = m.classifier_bias = true;
    m.hidden_act = config::Activation::gelu_tanh;
    m.global_rope_theta = 5000.0;
    m.local_rope_theta = 300.0;
  }
  return m;
}

// Weights far from their initial 1 / 0 / small values, so a wrong wiring shows.
void randomise(MaskedLmImpl& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) p.copy_(torch::randn_like(p) * 0.5);
}

struct Batch {
  torch::Tensor input_ids, attention_mask, labels, document_ids;
};

Batch make_batch(const Case& c) {
  Batch b;
  b.input_ids = torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong);
  b.attention_mask = torch::ones({kBatch, kSeq}, torch::kLong);
  if (c.padded) {
    b.attention_mask[1].narrow(0, 30, 10).zero_();
    b.attention_mask[2].narrow(0, 13, 27).zero_();  // padding longer than the half window
    b.input_ids.masked_fill_(b.attention_mask.eq(0), kPad);
  }
  b.document_ids = torch::zeros({kBatch, kSeq}, torch::kLong);
  b.document_ids[0].narrow(0, 11, 29).fill_(1);
  b.document_ids[0].narrow(0, 25, 15).fill_(2);
  b.document_ids[1].narrow(0, 20, 20).fill_(1);
  b.document_ids[2].narrow(0, 6, 34).fill_(1);
  if (c.padded) b.document_ids.masked_fill_(b.attention_mask.eq(0), 0);
  const auto selected = (torch::rand({kBatch, kSeq}) < 0.3).logical_and(b.attention_mask.eq(1));
  b.labels = torch::where(selected, torch::randint(5, kVocab, {kBatch, kSeq}, torch::kLong),
                          torch::full({kBatch, kSeq}, -100, torch::kLong));
  return b;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

class ModernBertReference : public ::testing::TestWithParam<Case> {};

TEST_P(ModernBertReference, MatchesTransformers) {
  const Case c = GetParam();
  config::testing::TempDir dir;
  torch::manual_seed(7);
  auto model = make_masked_lm(tiny_modernbert(c), kVocab, kPad);
  randomise(*model);
  model->train();  // dropouts are 0: training mode must be exact
  const Batch b = make_batch(c);

  {
    std::ofstream(dir.path() / "config.json") << hf_config_json(model).dump(2);
    write_safetensors((dir.path() / "model.safetensors").string(), model->hf_state_dict());
    TensorDict batch = {{"input_ids", b.input_ids}, {"attention_mask", b.attention_mask}, {"labels", b.labels}};
    if (c.documents) batch.emplace_back("document_ids", b.document_ids);
    write_safetensors((dir.path() / "batch.safetensors").string(), batch);
  }
  const std::string command = quote(MLM_PYTHON) + " " + quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") +
                              " modernbert_reference " + quote(dir.path().string()) + " > " +
                              quote((dir.path() / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir.path() / "py.out").rdbuf();
  std::map<std::string, torch::Tensor> ref;
  for (auto& [k, v] : read_safetensors((dir.path() / "reference.safetensors").string())) ref[k] = v;

  MlmInputs in;
  in.input_ids = b.input_ids;
  in.attention_mask = b.attention_mask;
  in.has_padding = c.padded;
  in.masked_positions = b.labels.reshape(-1).ne(-100).nonzero().reshape(-1);
  in.masked_labels = b.labels.reshape(-1).index_select(0, in.masked_positions);
  if (c.documents) in.document_ids = b.document_ids;
  ASSERT_GT(in.masked_positions.numel(), 10);

  auto out = model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["logits"], 1e-5, "logits");
  expect_tensor_near(out.mlm_loss_sum, ref["loss_sum"], 1e-4, "loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["correct"].item<int64_t>());
  (out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel())).backward();
  const int checked = testing::expect_reference_gradients(model, ref, 1e-4);
  EXPECT_EQ(checked, static_cast<int>(model->parameters().size()));
  const int64_t padded = model->padded_vocab_size();
  EXPECT_EQ(model->word_embeddings().grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Cases, ModernBertReference,
                         ::testing::Values(Case{"nopad_dense", false, false, false, false},
                                           Case{"nopad_sparse", false, false, true, false},
                                           Case{"pad_sparse", true, false, true, false},
                                           Case{"documents_dense", false, true, false, false},
                                           Case{"documents_pad_sparse", true, true, true, false},
                                           Case{"biases_pad_documents_sparse", true, true, true, true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::model::modernbert_reference

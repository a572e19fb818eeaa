// Reference parity, llm.c style: tests/reference/make_bert_reference.py (PyTorch nn modules,
// HF BERT math) wrote weights, a batch, logits, loss sums and gradients; the C++ model loads
// the same weights and must reproduce them (fp32: logits 1e-5, gradients 1e-4).
#include <gtest/gtest.h>

#include "mlm/model/bert/bert.h"
#include "model_test_util.h"

namespace mlm::model {
namespace {
using testing::expect_tensor_near;

struct Case {
  const char* norm;      // post (with NSP head) | pre
  bool padded;           // batch with padding
  bool sparse_head;
  int64_t pad_multiple;  // vocabulary padding of the C++ model
};

std::string name_of(const ::testing::TestParamInfo<Case>& info) {
  const auto& c = info.param;
  return std::string(c.norm) + (c.padded ? "_pad" : "_nopad") + (c.sparse_head ? "_sparse" : "_dense") +
         "_vocabx" + std::to_string(c.pad_multiple);
}

class BertReference : public ::testing::TestWithParam<Case> {};

TEST_P(BertReference, MatchesPyTorch) {
  const Case c = GetParam();
  const auto norm = std::string(c.norm) == "post" ? config::NormPosition::post : config::NormPosition::pre;
  auto cfg = testing::tiny_config(norm);
  cfg.sparse_head = c.sparse_head;
  cfg.pad_vocab_multiple = c.pad_multiple;
  torch::manual_seed(0);
  BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
  load_model_pt(model, testing::fixture(std::string("bert_") + c.norm + "_weights.pt"));
  model->train();  // dropout is 0: training mode must be exact too

  auto ref = testing::load_fixture(std::string("bert_") + c.norm + (c.padded ? "_pad" : "_nopad") + "_case.pt");
  const MlmInputs in = testing::reference_inputs(ref, c.padded, model->has_nsp_head());

  auto out = model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["mlm_logits"], 1e-5, "mlm_logits");
  expect_tensor_near(out.mlm_loss_sum, ref["mlm_loss_sum"], 1e-4, "mlm_loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["mlm_correct"].item<int64_t>());
  auto loss = out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel());
  if (model->has_nsp_head()) {
    ASSERT_TRUE(out.nsp_loss_sum.defined());
    expect_tensor_near(out.nsp_loss_sum, ref["nsp_loss_sum"], 1e-5, "nsp_loss_sum");
    EXPECT_EQ(out.nsp_correct.item<int64_t>(), ref["nsp_correct"].item<int64_t>());
    loss = loss + out.nsp_loss_sum / static_cast<double>(in.input_ids.size(0));
  }
  loss.backward();

  const int checked = testing::expect_reference_gradients(model, ref, 1e-4);
  EXPECT_GE(checked, 14);
  // Padded vocabulary rows never receive gradient.
  const int64_t v = testing::kTinyVocab, padded = model->padded_vocab_size();
  if (padded > v) {
    EXPECT_EQ(model->word_embeddings().grad().narrow(0, v, padded - v).abs().sum().item<double>(), 0.0);
    EXPECT_EQ(model->predictions->bias.grad().narrow(0, v, padded - v).abs().sum().item<double>(), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BertReference,
    ::testing::Values(Case{"post", true, true, 64}, Case{"post", true, false, 1}, Case{"post", false, true, 1},
                      Case{"post", false, false, 64}, Case{"pre", true, true, 64}, Case{"pre", true, false, 1},
                      Case{"pre", false, true, 1}, Case{"pre", false, false, 64}),
    name_of);

}  // namespace
}  // namespace mlm::model

// The model on a GPU: the reference fixtures reproduced in fp32 (TF32 off), and a bf16
// autocast step that stays finite. Skipped without a CUDA device.
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "cuda_skip.h"
#include "mlm/model/bert/bert.h"
#include "model_test_util.h"

namespace mlm::model {
namespace {
using testing::expect_tensor_near;

TEST(CudaModel, ReproducesTheReferenceInFp32) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  at::globalContext().setAllowTF32CuBLAS(false);  // fp32 products exactly as on the CPU
  const torch::Device cuda(torch::kCUDA, 0);
  for (const char* norm : {"post", "pre"}) {
    SCOPED_TRACE(norm);
    auto cfg = testing::tiny_config(std::string(norm) == "post" ? config::NormPosition::post
                                                                : config::NormPosition::pre);
    BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
    load_model_pt(model, testing::fixture(std::string("bert_") + norm + "_weights.pt"));
    model->to(cuda);
    model->train();
    auto ref = testing::load_fixture(std::string("bert_") + norm + "_pad_case.pt");
    const auto in = testing::reference_inputs(ref, /*padded=*/true, model->has_nsp_head(), cuda);
    auto out = model->forward(in, /*return_logits=*/true);
    expect_tensor_near(out.mlm_logits, ref["mlm_logits"], 1e-4, "mlm_logits");
    expect_tensor_near(out.mlm_loss_sum, ref["mlm_loss_sum"], 1e-4, "mlm_loss_sum");
    auto loss = out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel());
    if (model->has_nsp_head()) loss = loss + out.nsp_loss_sum / static_cast<double>(in.input_ids.size(0));
    loss.backward();
    EXPECT_GE(testing::expect_reference_gradients(model, ref, 1e-4), 14);
  }
}

TEST(CudaModel, Bf16AutocastStepIsFinite) {
  MLM_SKIP_WITHOUT_CUDA_DEVICES(1);
  const torch::Device cuda(torch::kCUDA, 0);
  BertForPreTraining model(testing::tiny_config(config::NormPosition::post), testing::kTinyVocab,
                           testing::kTinyPad);
  model->to(cuda);
  auto ref = testing::load_fixture("bert_post_pad_case.pt");
  const auto in = testing::reference_inputs(ref, /*padded=*/true, /*nsp=*/true, cuda);
  at::autocast::set_autocast_enabled(at::kCUDA, true);
  at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
  auto out = model->forward(in, true);
  at::autocast::set_autocast_enabled(at::kCUDA, false);
  at::autocast::clear_cache();
  EXPECT_EQ(out.mlm_logits.scalar_type(), torch::kBFloat16);
  auto loss = out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel()) +
              out.nsp_loss_sum / static_cast<double>(in.input_ids.size(0));
  ASSERT_TRUE(std::isfinite(loss.item<double>()));
  loss.backward();
  for (const auto& p : model->parameters()) {
    if (p.grad().defined()) EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
  }
}

}  // namespace
}  // namespace mlm::model
